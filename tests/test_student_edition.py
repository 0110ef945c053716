"""nbgrader end to end, on the course's own notebooks.

The student edition is generated with nbgrader; nbgrader's ``autograde`` scores the
untouched student edition 0 on every test cell and the reference notebooks full
marks. Every test cell is then shown to fail: the student edition is executed with
extra cells after each test cell that put in each plausible wrong answer (the test
cell must fail and name the mistake), then the reference answer (it must pass).
The autograde runs in a child process while this one executes those notebooks.
"""

import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from answers import WRONG
from labkit import exercises as checks
from labkit.grading import NOTEBOOKS_DIR, course_problems, exercises, nbgrader_role
from labkit.student import generate_edition, nbgrader, update_student_edition

LESSONS = ("01_one_file_read", "02_streamed_turn", "03_tool_results", "04_repair_and_verify",
           "05_failure_cases")
TWO_IDEAS = {"02_streamed_turn", "05_failure_cases"}  # two exercises each
STUB = "raise NotImplementedError()"


@dataclass
class Course:
    root: Path  # the nbgrader course directory: source/, release/, submitted/, autograded/
    release: Path
    student: Path  # what `make student` made (the code behind it), in a fresh folder
    added: list
    kept: list
    probes: dict  # lesson -> that student edition with probe cells, executed


def read(path):
    return nbformat.read(path, as_version=4)


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def outcome(cell) -> tuple:
    """(raised?, everything the cell printed and the error's message)."""
    error = next((o for o in cell.outputs if o.output_type == "error"), None)
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    return error is not None, text + (f"\n{error.ename}: {error.evalue}" if error else "")


def probe_notebook(student, reference):
    """The student edition with, after each test cell, each wrong answer and then the reference
    answer, each followed by the full test cell (hidden tests included)."""
    source = {grade_id(cell): cell.source for cell in reference.cells if grade_id(cell)}
    by_test = {exercise.test_id: exercise for exercise in exercises(reference)}
    cells = []
    for cell in student.cells:
        cells.append(cell)
        exercise = by_test.get(grade_id(cell))
        if exercise is None:
            continue
        cell.metadata["probe"] = ["stub", exercise.test_id]
        for number, wrong in enumerate(WRONG[exercise.check]):
            cells += [new_code_cell(wrong.code(exercise.answer_name)),
                      new_code_cell(source[exercise.test_id],
                                    metadata={"probe": ["wrong", exercise.test_id, number]})]
        cells += [new_code_cell(source[exercise.answer_id]),
                  new_code_cell(source[exercise.test_id],
                                metadata={"probe": ["restored", exercise.test_id]})]
    return new_notebook(cells=cells, metadata=student.metadata)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Autograde in a thread (it waits on nbgrader's child processes) while this thread makes
    the student edition as `make student` does and executes the probes on it."""
    missing = [name for name in LESSONS if not (NOTEBOOKS_DIR / f"{name}.ipynb").exists()]
    assert not missing, f"notebooks/ lacks {missing}"
    root, student = tmp_path_factory.mktemp("course"), tmp_path_factory.mktemp("student")
    with ThreadPoolExecutor(1) as pool:
        autograded = pool.submit(generate_and_autograde, root)
        added, kept = update_student_edition(into=student, notebooks_dir=NOTEBOOKS_DIR)
        probes = {}
        for name in LESSONS:
            notebook = probe_notebook(read(student / f"{name}.ipynb"),
                                      read(NOTEBOOKS_DIR / f"{name}.ipynb"))
            NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(student)}}).execute()
            probes[name] = notebook
        autograded.result()
    return Course(root, root / "release", student, added, kept, probes)


def generate_and_autograde(root) -> None:
    """nbgrader's own commands: generate with a gradebook, submit both editions, autograde."""
    release = generate_edition(root, NOTEBOOKS_DIR, gradebook=True)
    for student, edition in (("untouched", release), ("reference", root / "source")):
        shutil.copytree(edition, root / "submitted" / student)
    nbgrader(root, "autograde", "*", timeout=900)


@pytest.fixture(scope="module")
def scores(course):
    from nbgrader.api import Gradebook

    root = course.root
    found = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        for student in ("untouched", "reference"):
            for name in LESSONS:
                notebook = gradebook.find_submission_notebook(name, name, student)
                found[student, name] = {g.name: (g.score, g.max_score) for g in notebook.grades}
    return found


def test_every_lesson_has_valid_graded_exercises_using_every_check():
    paths = [NOTEBOOKS_DIR / f"{name}.ipynb" for name in LESSONS]
    assert course_problems(paths) == {str(path): [] for path in paths}
    found = {path.stem: exercises(read(path)) for path in paths}
    for name, lesson in found.items():
        assert len(lesson) >= (2 if name in TWO_IDEAS else 1), name
    used = {exercise.check for lesson in found.values() for exercise in lesson}
    assert used == set(checks.__all__)


def test_the_untouched_student_edition_scores_zero_on_every_test_cell(scores):
    for name in LESSONS:
        grades = scores["untouched", name]
        assert grades and all(score == 0 for score, _ in grades.values()), (name, grades)


def test_the_reference_notebooks_score_full_marks_on_every_test_cell(scores):
    for name in LESSONS:
        grades = scores["reference", name]
        assert grades and all(score == top > 0 for score, top in grades.values()), (name, grades)


def test_the_student_edition_hides_the_answers_and_keeps_the_tests(course):
    release = course.release
    for name in LESSONS:
        reference, student = read(NOTEBOOKS_DIR / f"{name}.ipynb"), read(release / name / f"{name}.ipynb")
        answers = {grade_id(c): c.source for c in student.cells if nbgrader_role(c) == "answer"}
        for cell in reference.cells:
            if nbgrader_role(cell) == "answer":
                solution = cell.source.split("### BEGIN SOLUTION")[1].split("### END SOLUTION")[0]
                assert STUB in answers[grade_id(cell)]
                assert solution.strip() not in answers[grade_id(cell)]
        tests = [c.source for c in student.cells if nbgrader_role(c) == "test"]
        assert all("check_" in source and "HIDDEN" not in source for source in tests), name


def test_the_untouched_student_edition_runs_with_errors_only_in_exercise_cells(course):
    root = course.root
    for name in LESSONS:
        graded = read(root / "autograded" / "untouched" / name / f"{name}.ipynb")
        for index, cell in enumerate(graded.cells):
            if cell.cell_type != "code":
                continue
            raised, text = outcome(cell)
            role = nbgrader_role(cell)
            if role == "test":
                assert raised and "Not yet." in text, (name, index, text)
            elif raised:
                assert role == "answer" and "NotImplementedError" in text, (name, index, text)


def probe_cells(probes, kind):
    return [(name, cell.metadata["probe"], cell) for name, notebook in probes.items()
            for cell in notebook.cells if cell.metadata.get("probe", [None])[0] == kind]


def test_every_test_cell_fails_on_the_unanswered_stub_with_readable_feedback(course):
    stubs = probe_cells(course.probes, "stub")
    assert len(stubs) >= len(LESSONS) + len(TWO_IDEAS)
    for name, (_, test_id), cell in stubs:
        raised, text = outcome(cell)
        assert raised and "Not yet." in text, (name, test_id, text)
        assert "NotImplementedError: replace" in text or "no value yet" in text, text


def test_every_test_cell_passes_with_the_reference_answer_restored(course):
    restored = probe_cells(course.probes, "restored")
    assert len(restored) == len(probe_cells(course.probes, "stub"))
    for name, (_, test_id), cell in restored:
        raised, text = outcome(cell)
        assert not raised and "All " in text, (name, test_id, text)


def test_every_test_cell_fails_on_each_wrong_answer_and_names_the_mistake(course):
    wrong = probe_cells(course.probes, "wrong")
    by_test = {}
    for name, (_, test_id, number), cell in wrong:
        raised, text = outcome(cell)
        exercise = next(e for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
                        if e.test_id == test_id)
        mistake = WRONG[exercise.check][number]
        assert raised, (name, test_id, mistake.mistake, text)
        assert mistake.names in text, (name, test_id, mistake.mistake, text)
        by_test[test_id] = by_test.get(test_id, 0) + 1
    assert len(by_test) == len(probe_cells(course.probes, "stub"))


def test_make_student_makes_the_same_edition_nbgrader_autograded(course):
    assert course.added == [f"{name}.ipynb" for name in LESSONS] and course.kept == []
    for name in LESSONS:
        made = read(course.student / f"{name}.ipynb")
        graded = read(course.release / name / f"{name}.ipynb")
        assert [(c.source, c.metadata) for c in made.cells] == \
            [(c.source, c.metadata) for c in graded.cells]
