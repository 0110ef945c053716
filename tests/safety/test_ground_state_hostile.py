"""Lesson 10's pieces against hostile input: project files and skill files that try to get
out of the workspace, to be huge or binary, or to break the parser; plan updates and
delegate calls of every wrong shape; a child whose model misbehaves in every way the loop
knows. Nothing raises out of the harness, nothing outside the workspace is read, and the
parent always reads one result."""

import os
import random

import pytest
from conftest import ListChat, call, final_text_turn, tool_turn

from labkit.harness import agent_events, call_tool
from labkit.harness.skills import SKILLS_DIR, Skills
from labkit.harness.subagents import Subagents
from labkit.harness.system_prompt import project_part
from labkit.harness.todo import Plan
from labkit.harness.toolkit import Toolkit
from labkit.harness.toolset import Joined

SECRET = "TOP-SECRET-CONTENT"


def outside_file(tmp_path):
    out = tmp_path / "outside"
    out.mkdir(exist_ok=True)
    (out / "secret.md").write_text(SECRET)
    return out / "secret.md"


HOSTILE_PROJECT_FILES = {
    "absolute link out": lambda root, secret: os.symlink(secret, root / "AGENTS.md"),
    "relative link out": lambda root, secret: os.symlink(
        os.path.relpath(secret, root), root / "AGENTS.md"
    ),
    "link to a link out": lambda root, secret: (
        os.symlink(secret, root / "hop.md"),
        os.symlink("hop.md", root / "CLAUDE.md"),
    ),
    "a folder": lambda root, secret: (root / "AGENTS.md").mkdir(),
    "a fifo": lambda root, secret: os.mkfifo(root / "AGENTS.md"),
    "a dangling link": lambda root, secret: os.symlink(root / "nowhere.md", root / "AGENTS.md"),
    "a link loop": lambda root, secret: os.symlink("AGENTS.md", root / "AGENTS.md"),
    "NUL bytes": lambda root, secret: (root / "AGENTS.md").write_bytes(b"rules\0\0"),
    "invalid UTF-8": lambda root, secret: (root / "AGENTS.md").write_bytes(b"\xff\xfe rules"),
    "two megabytes": lambda root, secret: (root / "AGENTS.md").write_bytes(b"x" * 2_000_000),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PROJECT_FILES))
def test_a_hostile_project_file_is_refused_with_a_note_and_nothing_outside_is_read(
    name, tmp_path, safety_tally
):
    root = tmp_path / "work"
    root.mkdir()
    HOSTILE_PROJECT_FILES[name](root, outside_file(tmp_path))
    found = project_part(root)
    assert found.part is None or SECRET not in found.part.text
    assert found.part is None and found.note, (name, found)
    safety_tally["hostile project files refused"] += 1


def test_random_bytes_in_a_project_file_never_split_a_character_or_raise(tmp_path, safety_tally):
    draw = random.Random(10)
    pieces = [b"a", b" ", b"\n", "\u00e9".encode(), "\u20ac".encode(), "\U0001f600".encode()]
    for _ in range(200):
        data = b"".join(draw.choices(pieces, k=draw.randrange(1, 40)))
        (tmp_path / "AGENTS.md").write_bytes(data)
        found = project_part(tmp_path, cap=draw.randrange(1, 60))
        assert "\ufffd" not in found.part.text
        assert data.decode().startswith(found.part.text.split("\n[labkit: ")[0])
        safety_tally["random project files capped"] += 1


HOSTILE_SKILLS = {
    "a link to a skill outside": "link",
    "NUL in the file": "---\nname: s\ndescription: d\n---\n\0",
    "no front matter": "just text",
    "a name with a slash": "---\nname: ../s\ndescription: d\n---\n",
    "a huge description": "---\nname: s\ndescription: " + "d" * 5000 + "\n---\n",
    "an endless front matter": "---\n" + "k: v\n" * 5000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_SKILLS))
def test_a_hostile_skill_is_not_offered_and_load_skill_answers_with_an_error(
    name, tmp_path, safety_tally
):
    folder = tmp_path / SKILLS_DIR / "s"
    if HOSTILE_SKILLS[name] == "link":
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "SKILL.md").write_text(f"---\nname: s\ndescription: d\n---\n{SECRET}\n")
        folder.parent.mkdir(parents=True)
        os.symlink(outside, folder)
    else:
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(HOSTILE_SKILLS[name])
    skills = Skills(tmp_path)
    assert skills.listed == []
    result = call_tool(skills, "load_skill", {"name": "s"})
    assert "error" in result and SECRET not in str(result)
    safety_tally["hostile skills refused"] += 1


HOSTILE_ARGUMENTS = [
    ("todo", {}),
    ("todo", {"items": None}),
    ("todo", {"items": [[]]}),
    ("todo", {"items": [{"task": "x" * 10_000, "status": "done"}]}),
    ("todo", {"items": [{"task": "a", "status": {"$ne": 1}}]}),
    ("todo", {"items": [{"task": "a", "status": "done"}] * 1000}),
    ("load_skill", {"name": "../../etc/passwd"}),
    ("load_skill", {"name": 7}),
    ("delegate", {"task": 7}),
    ("delegate", {"task": "x", "tools": ["run_command"]}),
    ("delegate", {"task": "x", "tools": ["delegate", "delegate"]}),
    ("delegate", {"task": "x", "tools": [None]}),
    ("delegate", {"task": "x", "extra": 1}),
]


def test_hostile_arguments_to_the_new_tools_are_tool_errors(tmp_path, safety_tally):
    child = ListChat()
    tools = Joined(Skills(tmp_path), Plan(), Subagents(child, lambda: Toolkit(tmp_path)))
    for name, arguments in HOSTILE_ARGUMENTS:
        result = call_tool(tools, name, arguments)
        assert set(result) == {"error"}, (name, arguments, result)
        safety_tally["hostile arguments to todo, load_skill and delegate"] += 1
    assert child.requests == []  # no refused delegate call ran a child


def test_a_child_whose_model_misbehaves_is_always_one_result_the_parent_reads(
    tmp_path, safety_tally
):
    def raising(messages, tool_schemas):
        raise RuntimeError("the model exploded")

    def broken_stream(messages, tool_schemas):
        yield {"not": "a chunk"}

    children = [
        raising,
        broken_stream,
        ListChat([]),  # a stream that ends at once
        ListChat(tool_turn(call("no_such_tool"))),
        ListChat(tool_turn(call("read_file", path="../../etc/passwd"))),
    ]
    for child in children:
        agents = Subagents(child, lambda: Toolkit(tmp_path), max_turns=1)
        parent = ListChat(tool_turn(call("delegate", task="look")), final_text_turn("done."))
        events = list(agent_events(parent, Joined(Toolkit(tmp_path), agents), "task"))
        result = next(e for e in events if e["type"] == "tool_result")["result"]
        assert {"answer", "stop_reason", "turns", "tool_calls"} <= set(result), result
        assert "root:" not in str(events)
        assert events[-1]["reason"] == "assistant_finished"
        safety_tally["misbehaving child models"] += 1
