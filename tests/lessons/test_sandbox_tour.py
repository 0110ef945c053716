"""Lesson 12's demonstrations: the recorded lines are what the lesson printed (whose outputs
nbval holds to real runs), a machine without the sandbox gets one message and the recorded
lines, and what would harm the machine never runs unsandboxed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labkit.harness import sandbox as sandbox_module
from labkit.harness.sandbox import Sandbox, SandboxUnavailable
from labkit.lessons import sandbox_tour
from labkit.lessons.sandbox_tour import (
    ATTEMPTS,
    RECORDED,
    arena,
    profiles_side_by_side,
    show_attempt,
    tour_sandbox,
)

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "12_sandbox.ipynb"


def printed_by_the_lesson() -> str:
    cells = json.loads(LESSON.read_text())["cells"]
    return "".join(
        "".join(output.get("text", ""))
        for cell in cells
        if cell["cell_type"] == "code"
        for output in cell.get("outputs", [])
    )


def test_every_attempt_has_a_recorded_line_and_the_lesson_printed_it():
    assert set(RECORDED) == set(ATTEMPTS)
    printed = printed_by_the_lesson()
    for name, line in RECORDED.items():
        assert f"with the sandbox (workspace-write): {line}\n" in printed, name


@pytest.fixture
def no_sandbox(monkeypatch):
    def refuse(self):
        raise SandboxUnavailable("the sandbox cannot start here: bwrap: no (exit code 1)")

    monkeypatch.setattr(Sandbox, "check", refuse)


def test_without_a_sandbox_one_message_then_recorded_lines(no_sandbox, capsys):
    assert tour_sandbox() is None
    show_attempt("kernel", None, plain=False)
    show_attempt("fork_bomb", None)
    printed = capsys.readouterr().out.splitlines()
    assert (
        printed[0] == "SandboxUnavailable: the sandbox cannot start here: bwrap: no (exit code 1)"
    )
    assert "Nothing will run unsandboxed in its place" in printed[1]
    assert printed[2] == f"with the sandbox:     {RECORDED['kernel']}  (recorded: no sandbox here)"
    assert printed[3] == (
        "without the sandbox:  not run: without a process cap this is a fork bomb on your machine"
    )
    assert printed[4].endswith("(recorded: no sandbox here)")


@pytest.mark.parametrize("name", ["fork_bomb", "fill_disk"])
def test_what_would_harm_the_machine_never_runs_unsandboxed(name, monkeypatch):
    monkeypatch.setattr(sandbox_tour, "run_command", lambda *a, **k: pytest.fail("it ran"))
    with arena() as a:
        assert ATTEMPTS[name](a, None).startswith("not run:")
        assert ATTEMPTS[name](a, Sandbox("none")).startswith("not run:")


def test_the_arena_holds_decoys_outside_the_workspace():
    with arena() as a:
        assert a.key.read_text().startswith("FAKE-KEY") and a.outside.read_text() == "untouched"
        assert not a.home.is_relative_to(a.copy) and a.outside.parent == a.copy.parent
    assert not a.home.exists()


def test_the_profiles_table_reads_the_options_the_sandbox_builds(monkeypatch):
    table = profiles_side_by_side().splitlines()
    workspace = next(line for line in table if line.startswith("the workspace"))
    assert workspace.split()[2:5] == ["--ro-bind", "--bind", "yours,"]
    network = next(line for line in table if line.startswith("network"))
    assert network.split()[1:] == ["--unshare-net", "--unshare-net", "yours"]
    monkeypatch.setitem(
        sandbox_module.PROFILES,
        "workspace-write",
        sandbox_module.Profile("workspace-write", network=True),
    )
    network = next(line for line in profiles_side_by_side().splitlines() if "network" in line)
    assert network.split()[1:] == ["--unshare-net", "shared", "yours"]
