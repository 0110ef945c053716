"""Skills: instructions the model loads when a task needs them, not before.

A skill is a folder in the workspace's ``.agents/skills/`` (the place Codex and other agents
look; Claude Code's is ``.claude/skills/``) holding a ``SKILL.md``: a front matter of
``key: value`` lines between two ``---`` lines, then the body, the instructions themselves::

    ---
    name: pytest-failures
    description: Read a failing pytest run and find the line that fails.
    ---
    1. Run the tests ...

The rules (those of the open Agent Skills format the agents share, on the keys read here):
``name`` is 1 to 64 lowercase letters, digits and single hyphens, and is the folder's name;
``description`` is one line of 1 to 1,024 characters; other keys are allowed and not read;
the file is UTF-8 text (no NUL) of at most :data:`MAX_SKILL_BYTES`.

Only each skill's name and description go into the system prompt (``Skills.part``: a few
dozen tokens a skill); the body reaches the model only when it calls ``load_skill(name)``,
which reads the file then. A skill whose front matter breaks the rules is not offered (a
note says why); ``load_skill`` answers an unknown name, an oversized or malformed file
with an error the model reads. No link is followed: a skill folder or file that is a link
is not a skill (``workspace.py`` reaches files without following links).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .contracts import PromptPart
from .toolset import Toolset, tool
from .workspace import Workspace

SKILLS_DIR = ".agents/skills"
MAX_SKILL_BYTES = 16_000
MAX_DESCRIPTION = 1_024
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_NAME = 64
#: What the skills part says before the list.
SKILLS_INTRO = (
    "Each skill is a set of instructions for one kind of work, kept out of this prompt until "
    "it is needed. When your task matches a skill's description, call load_skill with its "
    "name and follow what it returns."
)


class SkillError(ValueError):
    """A skill that cannot be used; the text says why, for the model and the person."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str


def parse_skill(text: str, folder: str) -> Skill:
    """A ``SKILL.md``'s text as a :class:`Skill` of the folder ``folder``, or ``SkillError``."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise SkillError(f"skill {folder!r}: SKILL.md must begin with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r") == "---")
    except StopIteration:
        raise SkillError(f"skill {folder!r}: its front matter has no closing '---' line") from None
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], start=2):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not re.fullmatch(r"[A-Za-z_][\w-]*", key):
            if line[:1] in (" ", "\t") and fields:  # a value on a second line
                raise SkillError(
                    f"skill {folder!r}: line {number} continues a value; name and "
                    "description are one line each"
                )
            raise SkillError(f"skill {folder!r}: line {number} is not 'key: value'")
        fields[key] = _unquoted(value.strip())
    for key in ("name", "description"):
        if not fields.get(key):
            raise SkillError(f"skill {folder!r}: its front matter has no {key}")
    name, description = fields["name"], fields["description"]
    if len(name) > MAX_NAME or not NAME.fullmatch(name):
        raise SkillError(
            f"skill {folder!r}: name {name!r} is not 1 to {MAX_NAME} lowercase letters, digits "
            "and single hyphens"
        )
    if name != folder:
        raise SkillError(f"skill {folder!r}: its name is {name!r}; it must be its folder's name")
    if len(description) > MAX_DESCRIPTION:
        raise SkillError(
            f"skill {folder!r}: its description is {len(description):,} characters; at most "
            f"{MAX_DESCRIPTION:,}"
        )
    return Skill(name, description, "\n".join(lines[end + 1 :]).strip("\n"))


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


class Skills(Toolset):
    """The skills of the workspace ``root``: ``listed`` (the ones offered), ``refused`` (why
    others are not), ``part()`` for the prompt, and the ``load_skill`` tool."""

    def __init__(self, root: str | os.PathLike[str], folder: str = SKILLS_DIR) -> None:
        self.workspace = Workspace(root)
        self.folder = folder
        self.listed: list[Skill] = []
        self.refused: dict[str, str] = {}  # folder name -> why it is not offered
        for name in self._folders():
            try:
                self.listed.append(self.read(name, listing=True))
            except SkillError as exc:
                self.refused[name] = str(exc)

    @property
    def notes(self) -> list[str]:
        """Why each skill that is not offered is not, for the person running the harness."""
        return [f"{reason}; not offered" for reason in self.refused.values()]

    def _folders(self) -> list[str]:
        try:
            with os.scandir(self.workspace.root / self.folder) as found:
                return sorted(
                    entry.name
                    for entry in found
                    if entry.is_dir(follow_symlinks=False) and not entry.name.startswith(".")
                )
        except OSError:
            return []

    def read(self, name: str, *, listing: bool = False) -> Skill:
        """The skill in the folder ``name``, read now, or ``SkillError``. When ``listing``,
        an oversized file still gives its name and description (``load_skill`` refuses it)."""
        path = PurePosixPath(self.folder, name, "SKILL.md")
        try:
            data, _ = self.workspace.read(path, MAX_SKILL_BYTES)
        except OSError as exc:
            raise SkillError(f"skill {name!r}: {exc}") from None
        if len(data) > MAX_SKILL_BYTES and not listing:
            raise SkillError(
                f"skill {name!r}: SKILL.md is over {MAX_SKILL_BYTES:,} bytes, more than a "
                "skill may hold; it was not loaded"
            )
        data = data[:MAX_SKILL_BYTES]
        if b"\0" in data:
            raise SkillError(f"skill {name!r}: SKILL.md is binary (it holds a NUL byte)")
        text = data.decode("utf-8", errors="replace" if listing else "strict")
        return parse_skill(text, name)

    def part(self) -> PromptPart:
        """The skills part of the prompt: the intro, then one line per skill (name and
        description only); empty text when there is no skill."""
        if not self.listed:
            return PromptPart("skills", "")
        lines = [f"- {skill.name}: {skill.description}" for skill in self.listed]
        return PromptPart("skills", SKILLS_INTRO + "\n" + "\n".join(lines))

    def inlined_part(self) -> PromptPart:
        """What the skills part would be with every body in it (to measure what loading on
        demand saves; no agent here sends this)."""
        bodies = [f"### {skill.name}\n{skill.description}\n\n{skill.body}" for skill in self.listed]
        return PromptPart("skills", "\n\n".join(bodies))

    @tool(
        description=(
            "Load a skill: the full instructions of one skill listed under 'Skills' in your "
            "system prompt, by its name. Load one when your task matches its description, "
            "before you start that part of the work, and follow it."
        ),
        parameters={
            "type": "object",
            "properties": {
                "name": {
                    "type": "string",
                    "description": "The skill's name, e.g. 'pytest-failures'.",
                }
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        read_only=True,
    )
    def load_skill(self, name: str) -> dict[str, Any]:
        known = [skill.name for skill in self.listed]
        if name in self.refused:
            raise SkillError(f"{self.refused[name]}, so it is not offered")
        if name not in known:
            listed = ", ".join(known) if known else "none"
            raise SkillError(f"unknown skill {name[:80]!r}; the skills are: {listed}")
        skill = self.read(name)
        return {"name": skill.name, "instructions": skill.body}
