"""nbgrader's conventions, as the course's notebooks use them.

An exercise is an *answer cell* (nbgrader "solution": unlocked, not graded, its
answer between ``### BEGIN SOLUTION`` and ``### END SOLUTION``) followed by its
*test cell* (graded, locked, points > 0) that calls a check from
``labkit.exercises``. ``exercise_problems`` lists every way a notebook breaks these
rules; ``lay_out_course`` builds the course directory nbgrader works in
(``python -m labkit.grading`` runs both from the command line).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ..settings import ANSWER_TIMEOUT, CELL_TIMEOUT, NOTEBOOK_TIMEOUT
from .checks import CHECKS

SCHEMA_VERSION = 3
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
HIDDEN_BEGIN, HIDDEN_END = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
GRADE_ID = re.compile(r"^[A-Za-z0-9_-]+$")  # the characters nbgrader accepts in a grade_id
CHECK_CALL = re.compile(r"\b(check_\w+)\(\s*([A-Za-z_]\w*)\s*\)")


@dataclass(frozen=True)
class Exercise:
    """One answer cell and its test cell, by position in the notebook."""

    answer_id: str
    test_id: str
    answer_index: int
    test_index: int
    points: float
    check: str | None  # the labkit check the test cell calls, e.g. "check_tool_message"
    answer_name: str | None  # the name the check is given, e.g. "make_tool_message"


def nbgrader_role(cell) -> str | None:
    """'answer', 'test', 'locked', 'other' (nbgrader metadata of another kind) or None."""
    meta = cell.get("metadata", {}).get("nbgrader")
    if meta is None:
        return None
    if meta.get("solution") and not meta.get("grade"):
        return "answer"
    if meta.get("grade") and not meta.get("solution"):
        return "test"
    if meta.get("locked") and not meta.get("grade") and not meta.get("solution"):
        return "locked"
    return "other"


def exercises(notebook) -> list:
    """The notebook's exercises: each test cell with the answer cell before it."""
    found, answer = [], None
    for index, cell in enumerate(notebook.cells):
        role = nbgrader_role(cell)
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if role == "answer":
            answer = (index, meta.get("grade_id"))
        elif role == "test" and answer is not None:
            call = CHECK_CALL.search(cell.source)
            found.append(
                Exercise(
                    answer[1],
                    meta.get("grade_id"),
                    answer[0],
                    index,
                    meta.get("points", 0),
                    call and call.group(1),
                    call and call.group(2),
                )
            )
            answer = None
    return found


def exercise_problems(notebook, known_checks=None) -> list:
    """Every way the notebook breaks the course's nbgrader rules, as sentences."""
    if known_checks is None:
        known_checks = set(CHECKS)
    problems, seen, waiting = [], {}, None
    code_cells = [i for i, cell in enumerate(notebook.cells) if cell.cell_type == "code"]
    for index, cell in enumerate(notebook.cells):
        role = nbgrader_role(cell)
        if role is None:
            continue
        meta = cell.metadata.nbgrader
        where = f"cell {index} ({meta.get('grade_id') or 'no grade_id'})"
        problems += _metadata_problems(meta, where, seen, index)
        if role == "other":
            problems.append(
                f"{where}: nbgrader metadata that is neither an answer nor a test "
                f"cell: {dict(meta)}"
            )
        elif role == "answer":
            problems += _answer_problems(cell, meta, where)
            if waiting is not None:
                problems.append(f"cell {waiting}: answer cell without a test cell after it")
            waiting = index
        elif role == "test":
            problems += _test_problems(cell, meta, where, known_checks)
            previous_code = [i for i in code_cells if i < index]
            if waiting is None or not previous_code or previous_code[-1] != waiting:
                problems.append(
                    f"{where}: a test cell must come right after its answer cell "
                    "(markdown may sit between them, code may not)"
                )
            waiting = None
    if waiting is not None:
        problems.append(f"cell {waiting}: answer cell without a test cell after it")
    if not any(nbgrader_role(cell) == "test" for cell in notebook.cells):
        problems.append("the notebook has no graded exercise")
    return problems


def _metadata_problems(meta, where, seen, index) -> list:
    problems = []
    if meta.get("schema_version") != SCHEMA_VERSION:
        problems.append(
            f"{where}: schema_version is {meta.get('schema_version')!r}, "
            f"nbgrader 0.9 writes {SCHEMA_VERSION}"
        )
    grade_id = meta.get("grade_id")
    if not isinstance(grade_id, str) or not GRADE_ID.match(grade_id):
        problems.append(f"{where}: grade_id must be letters, digits, '_' or '-'")
    elif grade_id in seen:
        problems.append(f"{where}: grade_id {grade_id!r} is already used by cell {seen[grade_id]}")
    else:
        seen[grade_id] = index
    return problems


def _answer_problems(cell, meta, where) -> list:
    problems = []
    if cell.cell_type != "code":
        problems.append(f"{where}: an answer cell must be a code cell")
    if meta.get("locked"):
        problems.append(f"{where}: an answer cell must not be locked")
    begin, end = cell.source.find(BEGIN), cell.source.find(END)
    if begin < 0 or end < begin:
        problems.append(f"{where}: the answer must sit between '{BEGIN}' and '{END}'")
    return problems


def _test_problems(cell, meta, where, known_checks) -> list:
    problems = []
    if cell.cell_type != "code":
        problems.append(f"{where}: a test cell must be a code cell")
    if not meta.get("locked"):
        problems.append(f"{where}: a test cell must be locked")
    points = meta.get("points")
    if isinstance(points, bool) or not isinstance(points, (int, float)) or points <= 0:
        problems.append(f"{where}: points must be a number above 0, not {points!r}")
    if BEGIN in cell.source or END in cell.source:
        problems.append(f"{where}: a test cell holds no solution markers")
    if cell.source.count(HIDDEN_BEGIN) != cell.source.count(HIDDEN_END):
        problems.append(f"{where}: '{HIDDEN_BEGIN}' and '{HIDDEN_END}' must come in pairs")
    call = CHECK_CALL.search(cell.source)
    if call is None or call.group(1) not in known_checks:
        problems.append(
            f"{where}: a test cell calls one of labkit.exercises' checks "
            f"({', '.join(sorted(known_checks))}) with the learner's answer"
        )
    return problems


def course_problems(paths) -> dict:
    """Problems per notebook, plus grade_ids shared between notebooks (under 'course')."""
    import nbformat  # here, not above: `make student` needs only lay_out_course, and fast

    report, owners = {}, {}
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        report[str(path)] = exercise_problems(notebook)
        for cell in notebook.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id:
                owners.setdefault(grade_id, []).append(Path(path).name)
    shared = [
        f"grade_id {grade_id!r} is used in {', '.join(names)}"
        for grade_id, names in owners.items()
        if len(set(names)) > 1
    ]
    if shared:
        report["course"] = shared
    return report


#: The settings ``lay_out_course`` writes: the course's id, and autograding that never drops a
#: submission and takes the grades of test cells from outside the learner's kernel.
CONFIG = """\
c = get_config()  # noqa: F821  (written by `python -m labkit.grading course`)
c.CourseDirectory.course_id = "agent-loop"

# A cell may run {cell_timeout} s; then it is interrupted, and a kernel that ignores the
# interrupt is restarted, so one hanging answer scores 0 on its cell and grading goes on.
c.Execute.timeout = {cell_timeout}
c.Execute.interrupt_on_timeout = True
c.Execute.raise_on_iopub_timeout = False
c.ExecuteKillingHangs.interrupt_grace = {interrupt_grace}

# The whole notebook may run {notebook_timeout} s; past them it fails and scores 0.
c.ExecuteKillingHangs.notebook_timeout = {notebook_timeout}

# Each graded test cell is graded again outside the kernel, from the answer cell's source
# (the learner's code can patch anything inside the kernel); that verdict is the score.
c.RegradeOutsideKernel.answer_timeout = {answer_timeout}

# Every learner's code runs in a bubblewrap sandbox (labkit/grading/sandboxes.py): the kernel
# and each answer's process, without the network, the gradebook, the answers or any other
# learner's files. Set both to False only where the sandbox cannot start, knowing that the
# learners' code then runs with your rights.
c.ExecuteKillingHangs.sandbox = True
c.RegradeOutsideKernel.sandbox = True
c.Autograde.autograde_preprocessors = [
    "labkit.grading.regrade.ExecuteKillingHangs",
    "labkit.grading.regrade.RegradeOutsideKernel",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
"""


def lay_out_course(
    root,
    notebooks_dir,
    *,
    cell_timeout: int = CELL_TIMEOUT,
    answer_timeout: int = ANSWER_TIMEOUT,
    interrupt_grace: int = 5,
    notebook_timeout: int = NOTEBOOK_TIMEOUT,
) -> list:
    """Make ``root`` an nbgrader course: ``source/<lesson>/<lesson>.ipynb``, one per notebook
    of ``notebooks_dir`` (the lessons with their reference answers).

    Each lesson is its own assignment, so a workshop can release and grade them one
    at a time. Writes ``nbgrader_config.py`` (see ``CONFIG``) unless there is one.
    ``root`` is made readable by its owner alone (0700): it holds the reference answers,
    the hidden tests and the gradebook. Returns the assignment names.
    """
    root, names = Path(root), []
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o700)
    for notebook in sorted(Path(notebooks_dir).glob("*.ipynb")):
        assignment = root / "source" / notebook.stem
        assignment.mkdir(parents=True, exist_ok=True)
        shutil.copy2(notebook, assignment / notebook.name)
        names.append(notebook.stem)
    config = root / "nbgrader_config.py"
    if not config.exists():
        config.write_text(
            CONFIG.format(
                cell_timeout=cell_timeout,
                answer_timeout=answer_timeout,
                interrupt_grace=interrupt_grace,
                notebook_timeout=notebook_timeout,
            ),
            encoding="utf-8",
        )
    return names
