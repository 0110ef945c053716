"""What the tests that grade a class share: the sandbox or a clear stop, notebooks as learners
hand them in, a course's files and gradebook read back for comparison."""

import copy
import hashlib
import os
from pathlib import Path

import nbformat
import pytest

from labkit.grading.conventions import nbgrader_role
from labkit.harness.sandbox import SandboxUnavailable


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def grading_sandbox_or_skip() -> None:
    """Grading runs every learner in a sandbox: skip where it cannot start (fail in CI)."""
    from labkit.grading.sandboxes import check_sandboxes

    try:
        check_sandboxes()
    except SandboxUnavailable as exc:
        if in_ci():
            pytest.fail(f"CI must grade in the real sandbox: {exc}", pytrace=False)
        pytest.skip(f"no grading sandbox on this machine: {exc}")


def read(path):
    return nbformat.read(path, as_version=4)


def graded_cells_only(notebook):
    """The notebook as a learner who hands in only their answers and the test cells would:
    the lesson's other cells (demonstrations, text) left out. Answer cells are self-contained
    and test cells import their check, so grading is the same; it is just quicker."""
    trimmed = copy.deepcopy(notebook)
    trimmed.cells = [cell for cell in trimmed.cells if nbgrader_role(cell) in ("answer", "test")]
    return trimmed


def hand_in(course: Path, learner: str, lesson: str, notebook) -> Path:
    folder = course / "submitted" / learner / lesson
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{lesson}.ipynb"
    nbformat.write(notebook, path)
    return path


def tree_digest(folder: Path) -> dict:
    """Every file under ``folder`` (links as links) -> sha256 of its bytes (or link target)."""
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        if "__pycache__" in path.parts:
            continue
        key = str(path.relative_to(folder))
        if path.is_symlink():
            found[key] = "link -> " + os.readlink(path)
        elif path.is_file():
            found[key] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def gradebook_dump(course: Path) -> dict:
    """Everything a grade depends on, per learner-lesson: timestamp, lateness, scores of every
    cell, comments (ids and row order left out: they differ between runs)."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for assignment in gradebook.assignments:
            for submission in gradebook.assignment_submissions(assignment.name):
                found[submission.student.id, assignment.name] = {
                    "timestamp": str(submission.timestamp),
                    "late": submission.total_seconds_late,
                    "score": submission.score,
                    "penalty": submission.late_submission_penalty,
                    "grades": {
                        f"{g.notebook.name}/{g.name}": (g.auto_score, g.manual_score)
                        for notebook in submission.notebooks
                        for g in notebook.grades
                    },
                    "comments": {
                        f"{c.notebook.name}/{c.name}": c.auto_comment
                        for notebook in submission.notebooks
                        for c in notebook.comments
                    },
                }
    return found


def notebook_view(path: Path) -> list:
    """A notebook as grading left it, without what differs from run to run (execution counts,
    drawn seeds, timings): each cell's source, nbgrader metadata, and outputs' kinds and errors."""
    return [
        (
            cell.cell_type,
            cell.source,
            cell.metadata.get("nbgrader"),
            [(o.get("output_type"), o.get("ename")) for o in cell.get("outputs", [])],
        )
        for cell in read(path).cells
    ]
