"""The one process that writes the gradebook while a class is graded in parallel.

Workers (:mod:`labkit.grading.grade_worker`) compute; this records, one submission after
another, in the process that runs ``python -m labkit grade``, outside any sandbox. For a
graded submission it runs nbgrader's own ``autograde`` once more, on a staging copy of the
submission in which the notebook is the one the worker autograded, with only the
preprocessors that write (``SaveAutoGrades``, ``AssignLatePenalties``,
``CheckCellMetadata``): every write a serial ``nbgrader autograde`` makes (the student, the
submission and its timestamp, each cell's score and comment, the late penalty) is made by
nbgrader's code, from the course's own files (the timestamp comes from ``submitted/``, never
from what a worker returned), so the gradebook and ``autograded/`` end as a serial run
leaves them. A submission that could not be graded gets 0 on every cell of the lesson, as
nbgrader gives a notebook that was never handed in, and its reason is kept.

Every learner-lesson recorded is a line in ``grading_journal.jsonl`` in the course folder,
written after the gradebook: a run that stops (Ctrl-C, a lost machine) starts again with
what has no line, and a submission already recorded is not graded again unless its files
changed (a newer submission collected since).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

#: The only preprocessors the writer runs: nbgrader's own writes, and its last metadata check.
WRITING = [
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
JOURNAL = "grading_journal.jsonl"


def submission_files(folder: Path) -> dict:
    """The regular files of a submission folder, by path inside it (links are left out: a
    learner's link could point at anything the grader can read)."""
    files = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink() and not _under_link(path, folder):
            files[path.relative_to(folder).as_posix()] = path.read_bytes()
    return files


def _under_link(path: Path, top: Path) -> bool:
    return any(
        parent.is_symlink() for parent in path.relative_to(top).parents if str(parent) != "."
    )


def digest(files: dict) -> str:
    """One hash of a submission's files (names and contents)."""
    hashed = hashlib.sha256()
    for name in sorted(files):
        hashed.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return hashed.hexdigest()


def read_journal(course: Path) -> dict:
    """``(student, assignment) -> the last line recorded for it``."""
    found = {}
    path = Path(course) / JOURNAL
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
                found[entry["student"], entry["assignment"]] = entry
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by a crash: that submission is graded again
    return found


class GradebookWriter:
    """Records workers' results into the course's gradebook and ``autograded/``."""

    def __init__(self, course, *, isolated: bool = True):
        from .grade_worker import load_config

        self.course = Path(course).resolve()
        self.isolated = isolated
        self.staging = Path(tempfile.mkdtemp(prefix="labkit-staging-"))
        config = load_config(self.course)
        config.CourseDirectory.submitted_directory = str(self.staging)
        config.Autograde.sanitize_preprocessors = []
        config.Autograde.autograde_preprocessors = list(WRITING)
        self.config = config
        own = load_config(self.course).CourseDirectory
        self.course_id = own.get("course_id", "")
        self.db_url = own.get("db_url") or f"sqlite:///{self.course / 'gradebook.db'}"

    def close(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def record(self, assignment: str, student: str, files: dict, result: dict) -> str | None:
        """Write one worker's result; the failure recorded (None: graded)."""
        failure = result.get("failure")
        if failure is None:
            failure = self._replay(assignment, student, files, result["notebooks"])
        if failure is not None:
            self.zero(assignment, student, failure)
        self._journal(assignment, student, files, failure, result.get("seconds"))
        return failure

    def zero(self, assignment: str, student: str, reason: str) -> None:
        """0 on every cell of the lesson for ``student``, as nbgrader scores a notebook never
        handed in; no ``autograded/`` folder for it (a failed serial run leaves none)."""
        from nbgrader.api import Gradebook

        timestamp = self._timestamp(assignment, student)
        with Gradebook(self.db_url, self.course_id) as gradebook:
            gradebook.update_or_create_student(student)
            submission = gradebook.update_or_create_submission(
                assignment, student, **({"timestamp": timestamp} if timestamp else {})
            )
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gradebook.db.commit()
        shutil.rmtree(self.course / "autograded" / student / assignment, ignore_errors=True)

    def _replay(self, assignment, student, files, notebooks) -> str | None:
        from nbgrader.apps import NbGraderAPI

        staged = self.staging / student / assignment
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir(parents=True)
        for name, data in files.items():
            target = staged / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(
                notebooks.get(name, data)
            )  # the worker's notebook, else as handed in
        try:
            result = NbGraderAPI(config=self.config).autograde(assignment, student, force=True)
        finally:
            shutil.rmtree(self.staging / student, ignore_errors=True)
        if result.get("success"):
            return None
        from .grade_worker import failure_reason

        return "the gradebook could not be written: " + failure_reason(
            (result.get("log") or "") + (result.get("error") or "")
        )

    def _timestamp(self, assignment: str, student: str) -> str | None:
        """The submission's time from ``submitted/``, as nbgrader reads it; None without one."""
        from nbgrader.utils import parse_utc

        path = self.course / "submitted" / student / assignment / "timestamp.txt"
        if not path.is_file() or path.is_symlink():
            return None
        text = path.read_text(encoding="utf-8", errors="replace").strip()
        try:
            return text if text and parse_utc(text) else None
        except ValueError:
            return None

    def _journal(self, assignment, student, files, failure, seconds) -> None:
        entry = {
            "student": student,
            "assignment": assignment,
            "digest": digest(files),
            "outcome": "graded" if failure is None else "failed",
            "reason": failure,
            "seconds": round(seconds, 2) if seconds is not None else None,
            "isolated": self.isolated,
            "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        }
        with open(self.course / JOURNAL, "a", encoding="utf-8") as journal:
            journal.write(json.dumps(entry) + "\n")
            journal.flush()
            os.fsync(journal.fileno())
