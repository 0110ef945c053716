"""A command written the way a person types it at a shell: what a question, a panel or a
verdict's reason shows, so that it reads naturally and, pasted into a shell, means what runs.

``shlex.join`` is right but hard to read: it puts single quotes around any word with a space,
and writes a single quote inside one as ``'"'"'``. Here a word is left bare when it can be,
put in single quotes when it holds no single quote, in double quotes when it holds one but
nothing a double-quoted word would expand (``$``, a backtick, ``\\``, ``!``), and handed to
``shlex.quote`` otherwise. A command the shell itself reads (one of a script's commands) has
words the shell expands at run time (``$HOME``, ``*.py``): those are shown bare, as the shell
receives them, not quoted as if they were plain text it would pass on unchanged.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

#: Characters a word may hold and still be typed bare.
PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")
#: What the shell expands in a word it reads itself: kept bare in such a word.
EXPANDED = frozenset("$*?[]{}~")
#: What a double-quoted word would still expand or unquote.
LIVE_IN_DOUBLE_QUOTES = frozenset('"$`\\!')


def typed_word(word: str, *, expanded: bool = False) -> str:
    """One word as a person would type it (``expanded``: the shell reads this word itself and
    expands it, so its ``$HOME`` or ``*`` are shown bare)."""
    if word and set(word) <= PLAIN:
        return word
    if expanded and word and set(word) <= PLAIN | EXPANDED:
        return word
    if "'" not in word:
        return f"'{word}'"
    if not LIVE_IN_DOUBLE_QUOTES & set(word):
        return f'"{word}"'
    return shlex.quote(word)


def typed(words: Sequence[str], *, expanded: bool = False) -> str:
    """Words as one command line, each as ``typed_word`` writes it."""
    return " ".join(typed_word(word, expanded=expanded) for word in words)
