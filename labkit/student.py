"""The student edition: every lesson with its exercise answers taken out, for learners to fill in.

``make student`` runs ``python -m labkit.student``. nbgrader's ``generate_assignment``
builds the edition in a scratch course directory; then each notebook is copied into
``student/`` only when no file of that name is there yet, so a learner's work is never
overwritten. To start one lesson afresh, rename (or delete) your copy and run
``make student`` again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .grading import NOTEBOOKS_DIR, lay_out_course
from .sample import PROJECT_DIR

STUDENT_DIR = PROJECT_DIR / "student"


class EditionError(RuntimeError):
    """nbgrader could not generate the student edition; the message holds its log."""


def nbgrader_command(course, *args) -> tuple:
    """The command line and environment that run one nbgrader command in a course directory.

    nbgrader starts ``alembic`` by name to set up its gradebook, so the directory of
    this interpreter (a venv's ``bin/``) goes first on PATH.
    """
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course}"], env


def nbgrader(course, *args, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run one nbgrader command in ``course``; raise :class:`EditionError` with its log if it fails."""
    command, env = nbgrader_command(course, *args)
    run = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True,
                         timeout=timeout)
    if run.returncode != 0:
        raise EditionError(f"`nbgrader {' '.join(args)}` failed (exit {run.returncode}):\n"
                           f"{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return run


def generate_edition(course, notebooks_dir=NOTEBOOKS_DIR, *, gradebook: bool = False) -> Path:
    """Lay out ``course`` from the notebooks, generate every lesson; return ``course/release``.

    Without ``gradebook`` nothing is written to nbgrader's database (a learner needs
    none); an instructor, or a test that autogrades, asks for it.
    """
    course = Path(course)
    if not lay_out_course(course, notebooks_dir):
        raise EditionError(f"no notebooks found in {notebooks_dir}")
    nbgrader(course, "generate_assignment", "*", "--force", *([] if gradebook else ["--no-db"]))
    return course / "release"


def copy_absent(release, into=STUDENT_DIR) -> tuple:
    """Copy each generated file into ``into`` unless a file of that name is already there.

    Returns ``(added, kept)``: the names copied, and the names left as the learner has them.
    """
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    added, kept = [], []
    for path in sorted(Path(release).glob("*/*")):
        if path.name.startswith(".") or not path.is_file():
            continue
        target = into / path.name
        if target.exists():
            kept.append(path.name)
        else:
            shutil.copy2(path, target)
            added.append(path.name)
    return added, kept


def update_student_edition(into=STUDENT_DIR, notebooks_dir=NOTEBOOKS_DIR) -> tuple:
    """Add the lessons ``into`` lacks, generated in a scratch directory; ``(added, kept)``.

    When no lesson is missing, nbgrader is not even started.
    """
    lessons = sorted(path.name for path in Path(notebooks_dir).glob("*.ipynb"))
    if lessons and all((Path(into) / name).exists() for name in lessons):
        return [], lessons
    with tempfile.TemporaryDirectory(prefix="labkit-edition-") as scratch:
        return copy_absent(generate_edition(scratch, notebooks_dir), into)


def main() -> int:
    try:
        added, kept = update_student_edition()
    except (EditionError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"could not make the student edition: {exc}", file=sys.stderr)
        return 1
    where = STUDENT_DIR.relative_to(PROJECT_DIR)
    if added:
        print(f"{where}/: added {', '.join(added)}")
    if kept:
        print(f"{where}/: left your {len(kept)} lesson(s) there as they are. For a fresh copy of "
              f"a lesson, rename yours (e.g. to 01_mine.ipynb) and run `make student` again.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
