"""One learner-lesson graded where a worker runs it: a process of this machine's pool, or a
Dask worker on another machine (:mod:`labkit.engine`).

The worker never touches the course: a :class:`Job` carries all it needs as data (the
course's ``nbgrader_config.py``, a copy of the gradebook taken before grading began, the
submission's files), so it works the same with or without a shared file system. In a
private folder it runs nbgrader's own ``autograde`` on that copy: the same sanitizing
(``OverwriteCells`` restores the locked cells from the gradebook copy), the same execution
(``ExecuteKillingHangs``, the kernel in its sandbox) and the same regrading outside the
kernel (``RegradeOutsideKernel``, each answer in its sandbox), all of the course's
preprocessors but the two that write grades (``SaveAutoGrades``, ``AssignLatePenalties``).
What comes back is the autograded notebook, or the reason there is none; the gradebook
copy, with whatever was written to it, is thrown away. One process, the writer
(:mod:`labkit.grading.gradebook_writer`), records what the workers computed.
"""

from __future__ import annotations

import re
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

#: The preprocessors that write the gradebook: the writer's alone.
SAVING = ("nbgrader.preprocessors.SaveAutoGrades", "nbgrader.preprocessors.AssignLatePenalties")
#: The course's preprocessors that carry the sandbox; a course without them is not graded.
SANDBOXED = (
    "labkit.grading.regrade.ExecuteKillingHangs",
    "labkit.grading.regrade.RegradeOutsideKernel",
)


@dataclass(frozen=True)
class Job:
    """One learner-lesson to grade, as data a worker anywhere can use."""

    assignment: str
    student: str
    config: str  # the course's nbgrader_config.py
    gradebook: bytes  # the gradebook as generate_assignment left it (source and test cells)
    files: dict = field(default_factory=dict)  # path in the submission -> bytes
    unisolated: bool = False  # the learner's code runs without its sandbox (said everywhere)


def grade_submission(job: Job) -> dict:
    """Autograde ``job`` in a private course; ``{"notebooks": {name: bytes}, "failure": reason
    or None, "seconds", "log"}``. Never raises for what the submission does."""
    started = time.perf_counter()
    failure = notebook_problem(job)
    notebooks, log = {}, ""
    if failure is None:
        with tempfile.TemporaryDirectory(prefix="labkit-grade-") as scratch:
            notebooks, failure, log = _autograde(job, Path(scratch))
    return {
        "notebooks": notebooks,
        "failure": failure,
        "seconds": time.perf_counter() - started,
        "log": log[-4000:],
    }


def notebook_problem(job: Job) -> str | None:
    """Why a submitted notebook cannot be graded at all (not a notebook nbformat reads), or
    None."""
    import nbformat

    for name, data in job.files.items():
        if not name.endswith(".ipynb") or "/" in name:
            continue
        try:
            nbformat.validate(nbformat.reads(data.decode("utf-8"), as_version=4))
        except Exception as exc:  # noqa: BLE001 (any way a file fails to be a notebook)
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            return f"corrupt notebook: {name} is not a notebook nbgrader can read ({first})"
    return None


def course_steps(config) -> list:
    """The course's autograde preprocessors, by dotted name."""
    from nbgrader.converters import Autograde

    steps = config.Autograde.get("autograde_preprocessors")
    steps = steps if steps else Autograde.autograde_preprocessors.default()
    return [s if isinstance(s, str) else f"{s.__module__}.{s.__name__}" for s in steps]


def load_config(course: Path):
    """The course's nbgrader configuration, rooted at ``course``."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    return config


def _autograde(job: Job, scratch: Path) -> tuple:
    from nbgrader.apps import NbGraderAPI

    course = scratch / "course"
    submitted = course / "submitted" / job.student / job.assignment
    submitted.mkdir(parents=True)
    (course / "source" / job.assignment).mkdir(parents=True)  # its other files: the writer's
    (course / "nbgrader_config.py").write_text(job.config, encoding="utf-8")
    (scratch / "gradebook.db").write_bytes(job.gradebook)
    for name, data in job.files.items():
        (submitted / name).parent.mkdir(parents=True, exist_ok=True)
        (submitted / name).write_bytes(data)
    config = load_config(course)
    config.CourseDirectory.db_url = f"sqlite:///{scratch / 'gradebook.db'}"
    config.Autograde.autograde_preprocessors = [s for s in course_steps(config) if s not in SAVING]
    if job.unisolated:
        config.ExecuteKillingHangs.sandbox = False
        config.RegradeOutsideKernel.sandbox = False
    with warnings.catch_warnings():  # nbgrader's own use of SQLAlchemy warns, harmlessly
        warnings.filterwarnings("ignore", message=r"Object of type <\w+> not in session")
        result = NbGraderAPI(config=config).autograde(job.assignment, job.student, force=True)
    log = (result.get("log") or "") + (result.get("error") or "")
    made = course / "autograded" / job.student / job.assignment
    wanted = [name for name in job.files if name.endswith(".ipynb") and "/" not in name]
    notebooks = {name: (made / name).read_bytes() for name in wanted if (made / name).is_file()}
    if result.get("success") and len(notebooks) == len(wanted):
        return notebooks, None, log
    return {}, failure_reason(log), log


#: What a failed run's log says, and the name the summary gives it (first match wins).
REASONS = (
    (r"NotebookTimedOut: (.*)", "hangs: {}"),
    (r"HiddenCasesMissing: (.*)", "no hidden test cases here: {}"),
    (r"SandboxUnavailable: (.*)", "no sandbox here: {}"),
    (r"(No notebooks were matched.*)", "no notebook handed in: {}"),
    (
        r"ValidationError: (.*)\n(?:.*\n)*?.*Notebook failed to validate",
        "tampered nbgrader metadata (the graded cells are not the lesson's): {}",
    ),
    (r"MissingEntry: (No such \w+ cell.*)", "tampered nbgrader metadata: {}"),
)


def failure_reason(log: str) -> str:
    """A failed autograde, named from its log (its last error line when nothing else fits)."""
    for pattern, name in REASONS:
        found = re.search(pattern, log)
        if found:
            return name.format(found.group(1).strip()[:300])
    errors = [
        line
        for line in log.splitlines()
        if re.search(r"\w+(Error|Exception): ", line) and "NbGraderException" not in line
    ]
    return "grading failed: " + (errors[0].strip()[:300] if errors else "no error in the log")
