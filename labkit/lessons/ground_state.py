"""Lesson 10's run: the course's repair with a ground state (an assembled system prompt, the
project's ``AGENTS.md``, skills), a plan the model keeps, and subagents.

``ground_workspace(root)`` writes what the lesson adds to a fresh copy of the sample: an
``AGENTS.md`` and three skills. ``ground_tools`` offers the toolkit of lesson 09, the
``load_skill`` tool, the ``todo`` plan and ``delegate``; ``ground_parts`` assembles the
prompt's four parts from them. ``run_ground(chat)`` runs the repair once on a fresh copy
with checks before and after, as every lesson's run does: children talk to the same
``chat`` unless ``chat_for(task)`` gives each its own, and a ``runner`` runs a turn's
read-only calls at once. The measurements the lesson prints are pure functions of the run's
events (``plan_updates``, ``family_sizes``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..harness.contracts import PromptPart
from ..harness.loop import agent_events
from ..harness.prompt import GROUND_RULES, GROUND_TASK, tool_policy
from ..harness.sample import Checks, run_checks, sample_copy
from ..harness.skills import SKILLS_DIR, Skills
from ..harness.subagents import CHILD_TURNS, MAX_DEPTH, Subagents
from ..harness.system_prompt import project_part
from ..harness.todo import Plan
from ..harness.toolkit import Toolkit
from ..harness.toolset import Joined
from .lesson import REPLAY_INSTEAD, LessonError

GROUND_TURNS = 10  # the parent's budget of model requests

AGENTS_MD = """\
# Working on path_rules

- Run the tests with `python -m pytest -qq`; they must pass before you finish.
- Never edit anything under tests/: the tests are the judge.
- Keep changes small: change one line rather than rewrite a function.
- Names in this project may be written with backslashes (Windows) or slashes.
"""

#: The skills the lesson's workspace holds: folder name -> (description, body).
SKILLS = {
    "pytest-failures": (
        "Read a failing pytest run and find the line of code that makes it fail.",
        """\
1. Run the tests once with `python -m pytest -qq` and read only the first failure.
2. Find the assertion that failed and the values pytest shows for both sides.
3. Read the function under test from its first line to its return, not only the line
   pytest names: the wrong value is often made a few lines earlier.
4. Write down, in one sentence, which input makes the wrong value and why.
5. Change the smallest thing that fixes that input, then run the tests again.
6. If another test fails now, you changed behaviour the tests rely on: undo and rethink.""",
    ),
    "release-notes": (
        "Write the release notes for a new version of the package.",
        """\
1. List the merged changes since the last tag with `git log --oneline LAST..HEAD`.
2. Group them under Added, Changed, Fixed and Removed; leave out internal refactors.
3. Write each line for a user of the package: what they can do now, not how it was done.
4. Name every change that breaks existing code under a heading of its own, first, with what
   to change in code that used the old behaviour.
5. Put the version and today's date in the heading, and link each line to its pull request.""",
    ),
    "windows-paths": (
        "Handle file names written with backslashes, drive letters or mixed separators.",
        """\
1. A name from a Windows user may use backslashes: `src\\api\\routes.py`.
2. `PurePosixPath` treats a backslash as an ordinary character: the whole name is one part.
3. `PureWindowsPath` splits on both separators, but it also reads drive letters (`C:`) and
   is case-insensitive when it compares: choose it only if the project wants both.
4. To accept both separators and nothing else, replace backslashes with slashes first:
   `PurePosixPath(name.replace('\\\\', '/'))`.
5. Test a plain name, a nested one, a Windows-style one and a mixed one.""",
    ),
}


def skill_text(name: str) -> str:
    """The ``SKILL.md`` of the lesson's skill ``name``."""
    description, body = SKILLS[name]
    return f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n"


def ground_workspace(root: Path, agents_md: str | None = AGENTS_MD) -> None:
    """Write the lesson's ``AGENTS.md`` (unless None) and skills into the copy ``root``."""
    if agents_md is not None:
        (root / "AGENTS.md").write_text(agents_md, encoding="utf-8")
    for name in SKILLS:
        folder = root / SKILLS_DIR / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(skill_text(name), encoding="utf-8")


def ground_tools(
    root: Path,
    chat,
    *,
    chat_for: Callable | None = None,
    runner=None,
    gate=None,
    child_turns: int = CHILD_TURNS,
    max_depth: int = MAX_DEPTH,
) -> Joined:
    """The parent's tools: the toolkit, ``load_skill``, ``todo`` and ``delegate`` (its
    children get the toolkit's read-only tools, under the same gate)."""
    agents = Subagents(
        chat,
        lambda: Toolkit(root),
        chat_for=chat_for,
        runner=runner,
        gate=gate,
        max_turns=child_turns,
        max_depth=max_depth,
    )
    return Joined(Toolkit(root), Skills(root), Plan(), agents)


def ground_parts(root: Path, tools: Joined) -> tuple[list[PromptPart], list[str]]:
    """The system prompt's parts for ``tools`` in ``root``, and the notes for the person
    (a skill not offered, a project file refused, cut, or passed over)."""
    skills = next(part for part in tools.parts if isinstance(part, Skills))
    names = [schema["function"]["name"] for schema in tools.schemas]
    found = project_part(root)
    parts = [
        PromptPart("base", GROUND_RULES),
        PromptPart("tool_policy", tool_policy(names)),
        skills.part(),
    ]
    if found.part is not None:
        parts.append(found.part)
    notes = [*skills.notes, *([found.note] if found.note else [])]
    return parts, notes


@dataclass(frozen=True)
class GroundRun:
    """One run: the loop's events, the prompt's parts, the notes, the checks before and after."""

    events: list
    parts: list
    notes: list
    checks_before: Checks
    checks_after: Checks

    @property
    def stop(self) -> dict:
        return self.events[-1]


def run_ground(
    chat,
    *,
    chat_for: Callable | None = None,
    runner=None,
    gate=None,
    task: str = GROUND_TASK,
    max_turns: int = GROUND_TURNS,
    agents_md: str | None = AGENTS_MD,
) -> GroundRun:
    """The repair with lesson 10's harness, once, on a fresh copy. A run that ends in
    ``model_error`` raises :class:`LessonError` (the cells after it study a run)."""
    with sample_copy() as root:
        ground_workspace(root, agents_md)
        before = run_checks(root)
        tools = ground_tools(root, chat, chat_for=chat_for, runner=runner, gate=gate)
        parts, notes = ground_parts(root, tools)
        events = list(
            agent_events(
                chat, tools, task, max_turns=max_turns, gate=gate, system=parts, runner=runner
            )
        )
        after = run_checks(root)
    stop = events[-1]
    if stop["reason"] == "model_error":
        raise LessonError(
            f"the run stopped after {stop['turns']} model requests: {stop['detail']} "
            f"{REPLAY_INSTEAD}"
        )
    return GroundRun(events, parts, notes, before, after)


# --- What the lesson measures on a run's events ------------------------------------------------


def plan_updates(events: list) -> list[list[dict]]:
    """Each plan the ``todo`` tool accepted, in order (a refused update is not one)."""
    return [
        event["result"]["plan"]
        for event in events
        if event["type"] == "tool_result" and event["name"] == "todo" and "plan" in event["result"]
    ]


def subagent_runs(events: list) -> list[dict]:
    """The run's ``subagent`` events, in order (children of children inside them)."""
    return [event for event in events if event["type"] == "subagent"]


def transcript_chars(events: list) -> int:
    """Characters of a run's transcript as its last request sent it: every message, as JSON."""
    last = [event for event in events if event["type"] == "model_start"][-1]
    return len(json.dumps(last["messages"], ensure_ascii=False))


def family_sizes(events: list) -> list[dict]:
    """For each child: its task, its transcript's characters (its last request's messages),
    and what joined the parent for it: the one tool result's characters."""
    results = [
        event for event in events if event["type"] == "tool_result" and event["name"] == "delegate"
    ]
    return [
        {
            "task": child["task"],
            "child_chars": transcript_chars(child["events"]),
            "result_chars": len(json.dumps(result["result"], ensure_ascii=False)),
        }
        for child, result in zip(subagent_runs(events), results)
    ]
