"""``python -m labkit grade COURSE_DIR``: autograde every submitted learner-lesson in parallel.

The course is the one ``python -m labkit.grading course`` laid out (after ``nbgrader
generate_assignment`` and ``collect``): every ``submitted/<learner>/<lesson>/`` not graded
yet becomes a job for :mod:`labkit.engine` (this machine's cores, or a Dask cluster with
``--scheduler``); each worker grades in its own sandboxes and sends back the autograded
notebook (:mod:`labkit.grading.grade_worker`); this process alone writes the gradebook and
``autograded/`` (:mod:`labkit.grading.gradebook_writer`), which end as a serial ``nbgrader
autograde`` leaves them. A progress bar counts what is done and estimates the rest; the
summary lists what was graded, what failed and why (each failure scores 0 for that lesson
alone), and what was left from an earlier run.

Grading refuses to start where the sandbox cannot (no bubblewrap, no user namespaces) unless
``--unisolated`` says the learners' code may run with your rights; the summary and the
class report then say so. It refuses too without the hidden test cases (the instructor's
package, ``labkit_answers``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

from ..engine import run_jobs
from ..harness.sandbox import SandboxUnavailable
from .grade_worker import SANDBOXED, Job, course_steps, grade_submission, load_config
from .gradebook_writer import GradebookWriter, digest, read_journal, submission_files
from .sandboxes import check_sandboxes

MAX_NOTEBOOK_BYTES = 32 << 20  # a bigger notebook is refused, named (outputs are cleared anyway)
#: Failures that say the machine could not grade, not that the submission is wrong: nothing is
#: recorded for them, and the next run grades them again once the machine is fixed.
MACHINE_FAILURES = ("no sandbox here", "no hidden test cases here")


class GradingRefused(RuntimeError):
    """The course cannot be graded as it is; the message says what to do."""


@dataclass
class Summary:
    """What one run did, for the lines it prints and for tests."""

    graded: list = field(default_factory=list)  # "learner/lesson"
    failed: dict = field(default_factory=dict)  # "learner/lesson" -> reason (scored 0)
    not_graded: dict = field(default_factory=dict)  # the machine's fault: graded next run
    skipped: list = field(default_factory=list)  # graded by an earlier run, unchanged since
    seconds: float = 0.0
    where: str = ""
    isolated: bool = True
    interrupted: bool = False

    def lines(self) -> list:
        done = len(self.graded) + len(self.failed)
        per = f", {self.seconds / done:.1f} s per learner-lesson" if done else ""
        lines = [f"graded {len(self.graded)} learner-lesson(s) in {self.seconds:.0f} s{per} "
                 f"({self.where})"]  # fmt: skip
        lines.append(
            "isolation: every learner's kernel and answers ran in the bubblewrap sandbox"
            if self.isolated
            else "UNISOLATED (--unisolated): learners' code ran with your rights, outside any "
            "sandbox; it could read the answers and change the gradebook"
        )
        if self.failed:
            lines.append(f"failed {len(self.failed)}, each scored 0 for that lesson:")
            lines += [f"  {key}: {reason}" for key, reason in sorted(self.failed.items())]
        if self.not_graded:
            lines.append(f"NOT graded {len(self.not_graded)} (fix this machine, run again):")
            lines += [f"  {key}: {reason}" for key, reason in sorted(self.not_graded.items())]
        if self.skipped:
            lines.append(f"left {len(self.skipped)} graded by an earlier run (unchanged since)")
        if self.interrupted:
            lines.append("stopped before the end: run the same command again to grade the rest")
        return lines


def grade_course(
    course,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    unisolated: bool = False,
    assignments=None,
    limit: int | None = None,
    progress: bool = False,
) -> Summary:
    """Grade what ``course`` has submitted and not graded yet; see the module's docstring.
    ``limit``: stop after that many learner-lessons (as if interrupted)."""
    with warnings.catch_warnings():  # nbgrader's own use of SQLAlchemy warns, harmlessly
        warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session")
        return _grade(course, scheduler, workers, unisolated, assignments, limit, progress)


def _grade(course, scheduler, workers, unisolated, assignments, limit, progress) -> Summary:
    course = Path(course).resolve()
    config_text = _check_course(course, unisolated)
    gradebook = (course / "gradebook.db").read_bytes()  # before the writer writes anything
    summary = Summary(isolated=not unisolated, where=_where(scheduler, workers))
    jobs, refused, summary.skipped = plan(course, assignments)
    writer = GradebookWriter(course, isolated=not unisolated)
    total, started = len(jobs) + len(refused), time.perf_counter()

    def record(key, student, assignment, files, result) -> bool:
        """Record one end; True when the run must stop there (``limit``)."""
        if str(result.get("failure")).startswith(MACHINE_FAILURES):
            summary.not_graded[key] = result["failure"]
        else:
            failure = writer.record(assignment, student, files, result)
            if failure is None:
                summary.graded.append(key)
            else:
                summary.failed[key] = failure
        count = len(summary.graded) + len(summary.failed) + len(summary.not_graded)
        summary.interrupted = limit is not None and count >= limit and count < total
        return summary.interrupted

    try:
        for key, reason in refused.items():
            student, assignment = key.split("/")
            files = submission_files(course / "submitted" / student / assignment)
            if record(key, student, assignment, files, {"failure": reason}):
                return summary
        calls = {
            key: (Job(assignment, student, config_text, gradebook, files, unisolated),)
            for key, (student, assignment, files) in jobs.items()
        }
        finished = run_jobs(
            grade_submission, calls, workers=workers, scheduler=scheduler, progress=progress
        )
        try:
            for end in finished:
                student, assignment, files = jobs[end.key]
                result = end.value if end.ok else {"failure": end.error}
                if record(end.key, student, assignment, files, result):
                    break
        finally:
            finished.close()
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        writer.close()
        summary.seconds = time.perf_counter() - started
    return summary


def plan(course: Path, assignments=None) -> tuple:
    """``(jobs, refused, skipped)``: each submission not graded yet as ``key -> (learner,
    lesson, files)``; those that cannot be graded at all, with the reason; those an earlier
    run graded (the journal has them, their files unchanged)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        known = {a.name: [n.name for n in a.notebooks] for a in gradebook.assignments}
    wanted = set(assignments) if assignments else set(known)
    journal = read_journal(course)
    jobs, refused, skipped = {}, {}, []
    submitted = course / "submitted"
    for folder in sorted(submitted.glob("*/*")) if submitted.is_dir() else []:
        student, assignment = folder.parent.name, folder.name
        if assignment not in wanted or assignment not in known or not folder.is_dir():
            continue
        key, files = f"{student}/{assignment}", submission_files(folder)
        done = journal.get((student, assignment))
        if done is not None and done.get("digest") == digest(files):
            skipped.append(key)
            continue
        problem = _submission_problem(folder, known[assignment], files)
        if problem:
            refused[key] = problem
        else:
            jobs[key] = (student, assignment, files)
    return jobs, refused, skipped


def _submission_problem(folder: Path, notebooks: list, files: dict) -> str | None:
    for name in notebooks:
        path = folder / f"{name}.ipynb"
        if path.is_symlink():
            return f"the notebook {path.name} is a link, not a file (it could point anywhere)"
        if path.is_file() and path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return f"the notebook {path.name} is over {MAX_NOTEBOOK_BYTES >> 20} MB"
    if not any(f"{name}.ipynb" in files for name in notebooks):
        expected = ", ".join(f"{name}.ipynb" for name in notebooks)
        return f"no notebook handed in: the submission holds no {expected}"
    return None


def _check_course(course: Path, unisolated: bool) -> str:
    """The course's config text, once it is known the course can be graded here."""
    config = course / "nbgrader_config.py"
    if not config.is_file() or not (course / "gradebook.db").is_file():
        raise GradingRefused(
            f"{course} is not a course ready to grade: it needs the nbgrader_config.py that "
            "`python -m labkit.grading course DIR` writes, and a gradebook.db (run `nbgrader "
            "generate_assignment` there first)"
        )
    missing = [step for step in SANDBOXED if step not in course_steps(load_config(course))]
    if missing:
        raise GradingRefused(
            f"{config} does not autograde with labkit's preprocessors ({', '.join(missing)}): "
            "the learners' code would run outside its sandbox and the checks inside the "
            "kernel. Write the course's config with `python -m labkit.grading course DIR` (or "
            "copy its settings into yours)"
        )
    if find_spec("labkit_answers") is None:
        raise GradingRefused(
            "the hidden test cases are not installed here: they are in the instructor's "
            "package, labkit_answers (`make setup` in a clone installs it; elsewhere pip "
            "install its wheel, `pip wheel --no-deps -w dist instructor/` in a clone)"
        )
    if not unisolated:
        try:
            check_sandboxes()
        except SandboxUnavailable as exc:
            raise GradingRefused(str(exc)) from None
    return config.read_text(encoding="utf-8")


def _where(scheduler, workers) -> str:
    if scheduler:
        return f"on the Dask cluster at {scheduler}"
    import os

    count = workers or os.cpu_count() or 1
    return f"on {count} local worker process{'es' if count > 1 else ''}"


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of ``python -m labkit grade``."""
    parser.description = (
        "Autograde every submitted learner-lesson of an nbgrader course in parallel, each "
        "learner's code in its sandbox, the gradebook written by this process alone. Run it "
        "again after an interruption: it grades what is left."
    )
    parser.add_argument("course", metavar="COURSE_DIR", help="the course folder (nbgrader's)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler, tcp://HOST:PORT")
    parser.add_argument("--workers", type=int, metavar="N", help="local workers (default: cores)")
    parser.add_argument("--assignment", action="append", metavar="LESSON", help="only this one")
    parser.add_argument("--limit", type=int, metavar="N", help="stop after N learner-lessons")
    parser.add_argument(
        "--unisolated",
        action="store_true",
        help="grade where the sandbox cannot start, learners' code running with your rights",
    )
    return parser


def run(args) -> int:
    """Run ``grade`` from the command line; print the summary."""
    try:
        summary = grade_course(
            args.course,
            scheduler=args.scheduler,
            workers=args.workers,
            unisolated=args.unisolated,
            assignments=args.assignment,
            limit=args.limit,
            progress=True,
        )
    except GradingRefused as exc:
        print(f"grading refused: {exc}", file=sys.stderr)
        return 2
    print("\n".join(summary.lines()))
    print(f"class report: python -m labkit report {args.course}")
    return 1 if summary.not_graded else 0
