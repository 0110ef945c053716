"""The learner's copy of the lessons: the student edition (answers taken out), or the reference.

``python -m labkit lessons DIR`` (``make student`` is ``lessons student``) copies the
student edition that labkit carries (``edition/`` in a clone, made from ``notebooks/`` by
nbgrader's ``generate_assignment``: ``make edition``) into DIR, each notebook only when no
file of that name is there yet, so a learner's work is never overwritten. ``--reference``
copies the lessons with their answers the same way; they are in the instructor's package
(``labkit_answers``), which a workshop's image does not install. To start one lesson afresh,
rename (or delete) your copy and run the command again.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..settings import EDITION_DIR, NOTEBOOKS_DIR, STUDENT_DIR
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


def reference_dir(notebooks_dir=None) -> Path:
    """The folder of the lessons with their reference answers: ``notebooks_dir`` if given, else
    the instructor's package's; :class:`EditionError` saying how to get it where there is none."""
    found = notebooks_dir or NOTEBOOKS_DIR
    if found is None:
        raise EditionError(
            "the lessons with their reference answers are not part of this install (a "
            "workshop's learners get the lessons without answers): in a clone they are in "
            "notebooks/; elsewhere install the instructor's package, the labkit_answers wheel "
            "(`pip wheel --no-deps -w dist instructor/` in a clone builds it)"
        )
    return Path(found)


def generate_edition(course, notebooks_dir=None, *, gradebook: bool = False) -> Path:
    """Lay out ``course`` from the reference lessons, generate every lesson; return
    ``course/release``.

    Without ``gradebook`` nothing is written to nbgrader's database (the edition needs
    none); an instructor, or a test that autogrades, asks for it.
    """
    course, notebooks_dir = Path(course), reference_dir(notebooks_dir)
    if not lay_out_course(course, notebooks_dir):
        raise EditionError(f"no notebooks found in {notebooks_dir}")
    nbgrader(course, "generate_assignment", "*", "--force", *([] if gradebook else ["--no-db"]))
    return course / "release"


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


def update_student_edition(into=STUDENT_DIR, edition_dir=EDITION_DIR) -> tuple:
    """Add the lessons of the student edition that ``into`` lacks; ``(added, kept)``."""
    return copy_files_absent(sorted(Path(edition_dir).glob("*.ipynb")), into)


def update_reference_edition(into, notebooks_dir=None) -> tuple:
    """Add the lessons with their answers that ``into`` lacks; ``(added, kept)``."""
    return copy_files_absent(sorted(reference_dir(notebooks_dir).glob("*.ipynb")), into)


def write_edition(into=EDITION_DIR, notebooks_dir=None) -> list:
    """Make the student edition afresh from the reference lessons (nbgrader, in a scratch
    course) and write it into ``into``, replacing what is there: ``make edition``, after a
    lesson changed. Returns the lessons' file names."""
    into = Path(into)
    with tempfile.TemporaryDirectory(prefix="labkit-edition-") as scratch:
        made = sorted(generate_edition(scratch, notebooks_dir).glob("*/*.ipynb"))
        into.mkdir(parents=True, exist_ok=True)
        for stale in into.glob("*.ipynb"):
            stale.unlink()
        for path in made:
            shutil.copy2(path, into / path.name)
    return [path.name for path in made]


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``python -m labkit lessons``."""
    parser.description = (
        "Write the lessons into FOLDER: the student edition, exercises "
        "unanswered, or with --reference the lessons with their answers (from the "
        "instructor's package, labkit_answers). A lesson already in FOLDER is never "
        "overwritten."
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
        else:
            added, kept = update_student_edition(into)
    except (EditionError, OSError) as exc:
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
