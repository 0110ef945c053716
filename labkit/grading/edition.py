"""The learner's copy of the lessons: the student edition (answers taken out), or the reference.

``python -m labkit lessons DIR`` (``make student`` is ``lessons student``) writes the
student edition: nbgrader's ``generate_assignment`` builds it in a scratch course
directory, then each notebook is copied into DIR only when no file of that name is
there yet, so a learner's work is never overwritten. ``--reference`` copies the
lessons with their answers the same way. To start one lesson afresh, rename (or
delete) your copy and run the command again.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

from ..settings import NOTEBOOKS_DIR, STUDENT_DIR
from .conventions import lay_out_course


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
    """Run one nbgrader command in ``course``; raise :class:`EditionError` with its log if it
    fails."""
    command, env = nbgrader_command(course, *args)
    run = subprocess.run(
        command, cwd=course, env=env, capture_output=True, text=True, timeout=timeout
    )
    if run.returncode != 0:
        log = run.stdout + run.stderr
        first = log.find("Traceback (most recent call last)")  # nbgrader logs the cause first
        cause = log[first : first + 4000] + "\n...\n" if 0 <= first < len(log) - 3000 else ""
        raise EditionError(
            f"`nbgrader {' '.join(args)}` failed (exit {run.returncode}):\n{cause}{log[-3000:]}"
        )
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
    return copy_files_absent(sorted(Path(release).glob("*/*")), into)


def copy_files_absent(paths, into) -> tuple:
    """Copy each of ``paths`` into ``into`` unless a file of its name is there;
    ``(added, kept)``."""
    into = Path(into)
    into.mkdir(parents=True, exist_ok=True)
    added, kept = [], []
    for path in paths:
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


def update_reference_edition(into, notebooks_dir=NOTEBOOKS_DIR) -> tuple:
    """Add the lessons with their answers that ``into`` lacks; ``(added, kept)``."""
    return copy_files_absent(sorted(Path(notebooks_dir).glob("*.ipynb")), into)


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``python -m labkit lessons``."""
    parser.description = (
        "Write the lessons into FOLDER: the student edition, exercises "
        "unanswered (made by nbgrader), or with --reference the lessons with "
        "their answers. A lesson already in FOLDER is never overwritten."
    )
    parser.add_argument(
        "folder",
        nargs="?",
        default=str(STUDENT_DIR),
        metavar="FOLDER",
        help=f"where to write them (default: {STUDENT_DIR})",
    )
    parser.add_argument(
        "--reference", action="store_true", help="the lessons with the exercises' reference answers"
    )
    return parser


def write_lessons(args) -> int:
    """Run ``lessons``: add the missing lessons to ``args.folder`` and say what happened."""
    into = Path(args.folder)
    if into.exists() and not into.is_dir():
        print(
            f"could not write the lessons into {into}: it is a file, not a folder; name a "
            "folder (it is made if missing)",
            file=sys.stderr,
        )
        return 1
    try:
        if args.reference:
            added, kept = update_reference_edition(into)
        elif find_spec("nbgrader") is None:
            raise EditionError(
                "nbgrader makes the student edition and is not installed: install the "
                "version the course is tested with (`python -m labkit constraints > "
                "pins.txt`, then `pip install -c pins.txt nbgrader`), or write the lessons "
                "with their answers with --reference"
            )
        else:
            added, kept = update_student_edition(into)
    except (EditionError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"could not write the lessons into {into}: {exc}", file=sys.stderr)
        return 1
    if added:
        print(f"{into}/: added {', '.join(added)}")
    if kept:
        again = "python -m labkit lessons " + " ".join(
            [*(["--reference"] * args.reference), str(into)]
        )
        print(
            f"{into}/: left your {len(kept)} lesson(s) there as they are. For a fresh copy of "
            f"a lesson, rename yours (e.g. to 01_mine.ipynb) and run `{again}` again."
        )
    return 0
