"""The system prompt, assembled at run time from named parts: what the model knows before it asks.

The system prompt is an agent's ground state. Here it has four parts, always in this order
(``contracts.PROMPT_PARTS``), each a :class:`~.contracts.PromptPart`:

1. ``base``: the harness's own rules (``prompt.py``), first and without a heading;
2. ``tool_policy``: one sentence per offered tool on when to use it (lesson 09's policy
   sentences), under ``## Tool policy``;
3. ``skills``: each skill's name and one-line description, never its body
   (``skills.py``), under ``## Skills``;
4. ``project``: the project's instructions file, verbatim, under
   ``## Project instructions (AGENTS.md)``: the repository's own words come last, nearest
   the task, and never before the harness's rules.

A part with no text is left out; parts are joined by one blank line. ``assembled(parts)``
puts them in that order, whatever order they are given in.

**The project's instructions file** is ``AGENTS.md`` in the workspace's root, or else
``CLAUDE.md``. When both are there, ``AGENTS.md`` wins and ``CLAUDE.md`` is not read: the
harness is no one vendor's, ``AGENTS.md`` is the name agents of many vendors read, and
``CLAUDE.md`` is Claude Code's own (each agent prefers its own name: Claude Code prefers
``CLAUDE.md``). A project that has both usually keeps one as a copy or an import of the
other; reading both would send the same instructions twice. The note says which was read.

``project_part(root, cap)`` reads it (``read_project_file``) and returns the part and a
note for the person running the harness (None when there is nothing to say):

- the file's bytes are injected verbatim, up to ``cap`` bytes; a longer file is cut at the
  last character boundary at or before ``cap`` (never inside a UTF-8 character) and
  followed by :data:`CAP_MARKER`, which says how many bytes were left out;
- refused, with a note, and the run goes on without it: a link whose target is outside the
  workspace (a link inside is followed: ``CLAUDE.md`` is often a link to ``AGENTS.md``),
  anything but a regular file (a folder, a pipe), a file over :data:`MAX_FILE_BYTES`
  (not read at all), and a binary file (a NUL byte, or bytes that are not UTF-8).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .byte_cuts import head_end
from .contracts import PROMPT_PARTS, PromptPart, SystemPrompt

PROJECT_FILES = ("AGENTS.md", "CLAUDE.md")  # looked for in this order: the first found wins
#: The headings of the parts after the base rules.
TITLES = {"tool_policy": "Tool policy", "skills": "Skills", "project": "Project instructions"}
DEFAULT_CAP = 4_000  # bytes of the project file injected at most
MAX_FILE_BYTES = 1_000_000  # a larger "instructions file" is refused unread
#: Follows the kept bytes of a file cut at the cap.
CAP_MARKER = "\n[labkit: the last {left} of {total} bytes of {name} were left out]"
_OPEN = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def heading(part: PromptPart) -> str:
    """The line above a part: none for the base rules, ``## Title (source)`` for the rest."""
    if part.name == "base":
        return ""
    return f"## {TITLES[part.name]}" + (f" ({part.source})" if part.source else "")


def section(part: PromptPart) -> str:
    """One part as the prompt holds it: its heading line, then its text."""
    title = heading(part)
    return f"{title}\n{part.text}" if title else part.text


def ordered(parts: Sequence[PromptPart]) -> list[PromptPart]:
    """``parts`` in the documented order, those with no text left out. An unknown name, a
    part given twice or a text that is not a string is a ``ValueError``."""
    named: dict[str, PromptPart] = {}
    for part in parts:
        if not isinstance(part, PromptPart):
            raise ValueError(f"a prompt part is a PromptPart(name, text), not {part!r:.80}")
        if part.name not in PROMPT_PARTS:
            raise ValueError(f"prompt part {part.name!r} is not one of {PROMPT_PARTS}")
        if part.name in named:
            raise ValueError(f"prompt part {part.name!r} is given twice")
        if not isinstance(part.text, str):
            raise ValueError(f"prompt part {part.name!r}: its text is not a string")
        named[part.name] = part
    return [named[name] for name in PROMPT_PARTS if name in named and named[name].text]


def assembled(parts: Sequence[PromptPart]) -> str:
    """The system prompt's text: each part's section, in the documented order."""
    return "\n\n".join(section(part) for part in ordered(parts))


def prompt_text(system: SystemPrompt) -> str:
    """What the loop sends as the system message: ``system`` itself, or its parts assembled."""
    return system if isinstance(system, str) else assembled(system)


# --- The project's instructions file --------------------------------------------------------


@dataclass(frozen=True)
class ProjectFile:
    """What was found: the ``part`` (None when there is none to inject) and a ``note`` for
    the person (why a file was refused or cut, or which of two files was read)."""

    part: PromptPart | None
    note: str | None = None


def project_part(root: str | os.PathLike[str], cap: int = DEFAULT_CAP) -> ProjectFile:
    """The project's instructions file in ``root`` as a prompt part (see the module's rules)."""
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ValueError(f"cap is a number of bytes above 0, not {cap!r}")
    root = Path(root)
    found = [name for name in PROJECT_FILES if os.path.lexists(root / name)]
    if not found:
        return ProjectFile(None)
    name = found[0]
    also = (
        f"{found[1]} is there too and was not read: {name} wins (see system_prompt.py)"
        if len(found) > 1
        else None
    )
    try:
        data = read_project_file(root, name)
    except ValueError as refused:
        return ProjectFile(None, _joined(f"{refused}; the run goes on without it", also))
    text, left = capped(data, cap)
    note = None
    if left:
        note = f"{name} is {len(data):,} bytes; the first {len(data) - left:,} were injected"
    if data:  # a cap below the first character keeps no byte, and the marker says so
        text += CAP_MARKER.format(left=left, total=len(data), name=name) if left else ""
        return ProjectFile(PromptPart("project", text, name), _joined(note, also))
    return ProjectFile(None, _joined(f"{name} is empty", also))


def read_project_file(root: Path, name: str) -> bytes:
    """The bytes of ``root/name``, or a ``ValueError`` saying why it is refused."""
    path = root / name
    if path.is_symlink():
        target = Path(os.path.realpath(path))
        inside = Path(os.path.realpath(root))
        if not target.is_relative_to(inside):
            raise ValueError(f"{name} is a link out of the workspace (to {target}); not read")
        path = target
    try:
        fd = os.open(path, _OPEN)
    except OSError as exc:
        raise ValueError(f"{name} cannot be opened ({exc.strerror}); not read") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):  # a folder, a pipe: before fdopen, which refuses a folder
        os.close(fd)
        raise ValueError(f"{name} is not a regular file; not read")
    with os.fdopen(fd, "rb") as file:
        if info.st_size > MAX_FILE_BYTES:
            raise ValueError(
                f"{name} is {info.st_size:,} bytes, over {MAX_FILE_BYTES:,}: too large to be "
                "instructions; not read"
            )
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:  # it grew between the check and the read
        raise ValueError(f"{name} is over {MAX_FILE_BYTES:,} bytes; not read")
    if b"\0" in data:
        raise ValueError(f"{name} is a binary file (it holds a NUL byte); not read")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{name} is not UTF-8 text (byte {exc.start} cannot be read); not read"
        ) from None
    return data


def capped(data: bytes, cap: int) -> tuple[str, int]:
    """``(text, bytes left out)``: all of ``data`` when it fits ``cap``, else the longest
    start of at most ``cap`` bytes that ends between two characters."""
    if len(data) <= cap:
        return data.decode("utf-8"), 0
    end = head_end(data, cap)
    return data[:end].decode("utf-8"), len(data) - end


def _joined(*notes: str | None) -> str | None:
    kept = [note for note in notes if note]
    return "; ".join(kept) if kept else None
