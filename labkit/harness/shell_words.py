"""Shell words: how the scanner reads one word, and what the shell does with it.

``shell_syntax.py`` splits a shell string into commands; this module reads their words,
a run of characters at a time: plain text, ``\\`` escapes, ``'...'`` and ``"..."``, and
the expansions (``$name``, ``${...}``, ``$((...))``, ``$[...]``, ``$(...)``, backticks,
``<(...)``, ``$'...'``), and an unquoted here-document's body. A substitution's commands
are read by the scanner (``commands``, which :class:`WordReader` leaves to it); an
expansion the gate cannot judge becomes an *unknown* part. ``shell_syntax.py``'s docstring
gives the whole grammar. Here too are the ``Part`` the scanner hands out, its errors, and
its bounds on nesting and size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .shell_programs import is_pure_arithmetic
from .shell_text import typed_word

MAX_DEPTH = 32  # levels of nesting: deeper, the gate refuses to judge (deny)
MAX_PARTS = 10_000  # commands in one call: more, the gate refuses to judge (deny)
SHOWN = 200  # characters of a command a reason quotes
#: A redirection's operator, as a redirection's command begins: shown bare, as written.
OPERATOR = re.compile(r"[0-9]*(&>>|&>|>>|>&|>\||<<<|<<-|<<|<>|<&|>|<)")
_WORD_CHAR = r"[^ \t\n'\"\\$`;&|()<>]"
UNQUOTED = re.compile(rf"{_WORD_CHAR}*(?:\\[^\n]{_WORD_CHAR}*)*")  # text and \-escapes
ESCAPED = re.compile(r"\\(.)", re.S)
GLOBBING = re.compile(r"[*?\[{~]")
SINGLE_QUOTED = re.compile(r"(?:'[^']*')+")
IN_DOUBLE_QUOTES = re.compile(r'[^"\\$`]+')
IN_BACKTICKS = re.compile(r"[^`\\]*(?:\\.[^`\\]*)*", re.S)
ANSI_C = re.compile(r"[^'\\]*(?:\\.[^'\\]*)*", re.S)
EXPANDING = re.compile(r"[\\$`]")  # what matters in an unquoted here-document's body
BALANCED_STOP = re.compile(r"[^()\[\]{}$`\\'\"]+")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
PLAIN_EXPANSIONS = re.compile(r"(?:\$(?:[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]))+")  # $x$1...
PARAMETER = re.compile(r"#?(?:[A-Za-z_]\w*|[0-9]+|[@*#?$!-])(?:\[([^\]]*)\])?")
SAFE_TRANSFORMS = ("Q", "E", "a", "A", "K", "k", "u", "U", "L")  # ${x@Q}...; @P runs code


class ShellSyntaxError(ValueError):
    """A shell string the gate cannot split into commands (an unclosed quote, say)."""


class TooComplex(ShellSyntaxError):
    """Nested deeper than ``MAX_DEPTH``, or more than ``MAX_PARTS`` commands."""


@dataclass(frozen=True)
class Part:
    """One command a call would run: its words, which the shell changes at run time, and,
    if the scanner cannot tell what it runs, why not."""

    words: tuple[str, ...]
    dynamic: bool = False  # holds a variable, substitution, glob...: unknown until run time
    expanded: frozenset = frozenset()  # the indexes of the words the shell changes
    first: int = 0  # the index of its program word (after leading assignments)
    more: bool = False  # words may be added at run time (xargs)
    unknown: str | None = None  # why it may run commands the scanner cannot see

    def __str__(self) -> str:
        """The command as a person reads it in the script, cut after about ``SHOWN``
        characters: a redirection's operator bare, the words the shell expands as it receives
        them, the others quoted as a person types them (``shell_text.typed_word``)."""
        if not self.words:
            return "(nothing)"
        shown, size = [], 0
        for index, word in enumerate(self.words[: SHOWN + 1]):
            if size >= SHOWN:
                break
            cut = word if len(word) <= SHOWN else word[:SHOWN] + "…"
            bare = index == 0 and OPERATOR.fullmatch(word)
            shown.append(cut if bare else typed_word(cut, expanded=index in self.expanded))
            size += len(shown[-1]) + 1
        return " ".join(shown) + (" …" if len(shown) < len(self.words) else "")


def emit(parts: list[Part], part: Part) -> None:
    if len(parts) >= MAX_PARTS:
        raise TooComplex(f"it holds more than {MAX_PARTS:,} commands")
    parts.append(part)


def deeper(depth: int) -> int:
    if depth + 1 > MAX_DEPTH:
        raise TooComplex(f"it nests more than {MAX_DEPTH} levels deep")
    return depth + 1


class Word:
    """A word as it is read: its pieces, and what the shell would do with it."""

    __slots__ = ("pieces", "bare", "quoted", "expanded")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.bare: list[str] = []  # its unquoted text, for globs (quoted text becomes "'")
        self.quoted = self.expanded = False

    def add(self, text: str, quoted: bool) -> None:
        self.pieces.append(text)
        self.bare.append("'" if quoted else text)
        self.quoted = self.quoted or quoted

    def text(self) -> str:
        return "".join(self.pieces)

    def globs(self) -> bool:
        """A glob (``*``, ``?``, ``[...]``), a brace (``{a,b}``, ``{1..3}``) or a leading ``~``
        in its unquoted text (looked for in linear time: no backtracking search)."""
        bare = "".join(self.bare)
        if "*" in bare or "?" in bare or bare.startswith("~"):
            return True
        opening = bare.find("[")
        if opening >= 0 and "]" in bare[opening:]:
            return True
        opening, closing = bare.find("{"), bare.rfind("}")
        inside = bare[opening:closing] if 0 <= opening < closing else ""
        return "," in inside or ".." in inside


def unescaped(piece: str) -> str:
    """A run of unquoted text and ``\\`` escapes with each escape's backslash removed."""
    if "\0" in piece:
        return ESCAPED.sub(r"\1", piece)
    return piece.replace("\\\\", "\0").replace("\\", "").replace("\0", "\\")


class WordReader:
    """Reads the words of one shell text, with their expansions, into ``parts``; the
    scanner that extends it reads the commands (``commands``, for ``$(...)``) and the
    whole text (``script``). A text inside the text (a backtick's body, a here-document's)
    gets a reader of the same kind, one level deeper."""

    def __init__(self, text: str, parts: list[Part], depth: int) -> None:
        self.text, self.parts, self.depth = text, parts, depth
        self.heredocs: list[tuple[str, bool, bool, int]] = []  # delimiter, quoted, tabs, depth

    def commands(self, i: int, closing: str | None) -> int:
        raise NotImplementedError

    def script(self, *, whole: bool = True) -> None:
        raise NotImplementedError

    def unknown(self, text: str, why: str) -> None:
        """A piece of text that may run what the scanner cannot see."""
        emit(self.parts, Part((text[:200],), True, unknown=why))

    def word_text(self, i: int) -> tuple[int, Word]:
        """Read one word from ``i``: where it ends (a blank, a separator or a redirection),
        and the word."""
        text, word = self.text, Word()
        while i < len(text):
            c = text[i]
            run = UNQUOTED.match(text, i)
            if run.end() > i:
                piece = run.group()
                if "\\" in piece:  # escaped characters are quoted: not globs, not reserved
                    word.pieces.append(unescaped(piece))
                    word.bare.append(ESCAPED.sub("'", piece) if GLOBBING.search(piece) else "'")
                    word.quoted = True
                else:
                    word.add(piece, False)
                i = run.end()
            elif c == "\\":
                if i + 1 == len(text):
                    raise ShellSyntaxError("the command ends with a backslash")
                i += 2  # a backslash and a newline: the word goes on on the next line
            elif c == "'":
                quoted = SINGLE_QUOTED.match(text, i)  # '...' (and '...''...' at once)
                if quoted is None:
                    raise ShellSyntaxError("a single quote is not closed")
                word.add(quoted.group().replace("'", ""), True)
                i = quoted.end()
            elif c == '"':
                word.quoted = True
                i = self.double_quoted(i + 1, word)
            elif c == "$" and (plain := PLAIN_EXPANSIONS.match(text, i)):
                word.add(plain.group(), True)  # $x$y...: many at once, as expansion() reads them
                word.expanded = True
                i = plain.end()
            elif c in "$`":
                i = self.expansion(i, word)
            elif c in "<>" and text.startswith("(", i + 1):
                start = i
                i = self.commands(i + 2, ")")
                word.add(text[start:i], True)
                word.expanded = True
            else:
                break  # a blank, a separator or a redirection ends the word
        return i, word

    def expansions_only(self) -> None:
        """Read an unquoted here-document's body: only its expansions run."""
        text, i = self.text, 0
        while (found := EXPANDING.search(text, i)) is not None:
            i = found.start()
            i = i + 2 if text[i] == "\\" else self.expansion(i, Word())

    def double_quoted(self, i: int, word: Word) -> int:
        """Read ``"..."`` from inside the opening quote into ``word``; return its end."""
        text = self.text
        while True:
            if i >= len(text):
                raise ShellSyntaxError("a double quote is not closed")
            c = text[i]
            if c == '"':
                return i + 1
            run = IN_DOUBLE_QUOTES.match(text, i)
            if run:
                word.add(run.group(), True)
                i = run.end()
            elif c == "\\":
                following = text[i + 1 : i + 2]
                if following in ('"', "\\", "$", "`"):
                    word.add(following, True)
                elif following != "\n":
                    word.add("\\" + following, True)
                i += 2
            else:
                i = self.expansion(i, word)

    def expansion(self, i: int, word: Word) -> int:
        """Read the ``$...`` or backtick expansion at ``i`` into ``word``; return its end.
        Substituted commands become parts; what the scanner cannot judge, unknown parts."""
        text = self.text
        following = text[i + 1 : i + 2]
        if text[i] == "`":
            end = self.backquoted(i)
        elif following == "(":
            start, end = len(self.parts), None
            if text.startswith("((", i + 1):
                end = self.arithmetic(i + 3)
                if end is None:
                    del self.parts[start:]  # not arithmetic: a substitution of a subshell
                elif not is_pure_arithmetic(text[i + 3 : end - 2]):
                    self.unknown(text[i:end], "arithmetic on names or expansions can run commands")
            if end is None:
                end = self.commands(i + 2, ")")
        elif following == "{":
            end = self.parameter(i)
        elif following == "[":
            end, _ = self.balanced(i + 2, "[", "]")
            self.unknown(text[i:end], "'$[' is arithmetic to bash, which can run commands")
        elif NAME.match(following):  # $name
            end = NAME.match(text, i + 1).end()
        elif following and following in "0123456789@*#?$!-":  # $1, $@, $?...
            end = i + 2
        elif following == "'":  # $'...': ANSI-C quoting
            body = ANSI_C.match(text, i + 2)
            end = body.end() + 1
            if end > len(text):
                raise ShellSyntaxError("a $' quote is not closed")
            if "\\'" in body.group():
                self.unknown(text[i:end], "bash and dash end this $'...' at different places")
        elif following == '"':  # $"...": translated text, expanded as "..." is
            end = self.double_quoted(i + 2, Word())
        else:
            word.add("$", False)
            return i + 1
        word.add(text[i:end], True)
        word.expanded = True
        return end

    def backquoted(self, i: int) -> int:
        """A backtick's body: unescaped (``\\\\``, ``\\```, ``\\$``), then read as commands."""
        body = IN_BACKTICKS.match(self.text, i + 1)
        end = body.end()
        if end >= len(self.text):
            raise ShellSyntaxError("a backtick is not closed")
        unescaped = re.sub(r"\\([\\`$])", r"\1", body.group())
        type(self)(unescaped, self.parts, self.depth).script(whole=False)
        return end + 1

    def arithmetic(self, i: int) -> int | None:
        """From inside ``$((`` (or ``((``), the index after its ``))``; None when a ``)``
        closes it alone (then it is a command substitution of a subshell)."""
        end, _ = self.balanced(i, "(", ")")
        return end + 1 if self.text.startswith(")", end) else None

    def parameter(self, i: int) -> int:
        """``${...}`` at ``i``: its end; an unknown part when it can run what is unseen."""
        end, quotes = self.balanced(i + 2, "{", "}", what="${")
        body = self.text[i + 2 : end - 1]
        head = PARAMETER.match(body)
        rest = body[head.end() :] if head else ""
        why = None
        if quotes:
            why = "bash and dash end a '${' holding quotes at different places"
        elif head is None:
            why = "it is not a parameter expansion the gate reads"
        elif body.startswith("!") and len(body) > 1:
            why = "an indirect expansion evaluates a name's subscript, which can run commands"
        elif head.group(1) not in (None, "@", "*") and not is_pure_arithmetic(head.group(1)):
            why = "an array subscript is arithmetic, which can run commands"
        elif rest.startswith(":") and rest[1:2] not in ("-", "=", "?", "+"):
            if not is_pure_arithmetic(rest[1:]):
                why = "a substring's offset is arithmetic, which can run commands"
        elif rest.startswith("@") and rest[1:] not in SAFE_TRANSFORMS:
            why = f"the transformation {rest[:2]!r} can run commands"
        if why:
            self.unknown(self.text[i:end], why)
        return end

    def balanced(self, i: int, opening: str, closing: str, what: str = "") -> tuple[int, bool]:
        """From ``i``, the index after the ``closing`` that matches (the ``opening``s inside
        counted), nested expansions read as such; and whether quotes were inside."""
        self.depth = deeper(self.depth)
        text, depth, quotes = self.text, 0, False
        while i < len(text):
            run = BALANCED_STOP.match(text, i)
            if run:
                i = run.end()
                continue
            c = text[i]
            if c == "\\":
                i += 2
            elif c in "$`":
                i = self.expansion(i, Word())
            elif c == "'":
                quotes, close = True, text.find("'", i + 1)
                if close < 0:
                    raise ShellSyntaxError("a single quote is not closed")
                i = close + 1
            elif c == '"':
                quotes, i = True, self.double_quoted(i + 1, Word())
            elif c == opening:
                depth, i = depth + 1, i + 1
            elif c == closing:
                if depth == 0:
                    self.depth -= 1
                    return i + 1, quotes
                depth, i = depth - 1, i + 1
            else:
                i += 1
        raise ShellSyntaxError(f"a '{what or opening}' is not closed")
