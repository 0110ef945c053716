"""nbgrader end to end, on the course's own notebooks.

nbgrader generates the student edition; its ``autograde`` scores the untouched
student edition 0 on every test cell, with feedback, and the reference notebooks
full marks. The student edition is shown to be the reference with only the answers
(and hidden tests) taken out, so the reference run is the student edition with its
answers restored. Plausible wrong answers are appended to the reference submission,
each followed by its test cell: every test cell must fail on each and name the
mistake, then pass again on the restored reference answer.
"""

import copy
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from answers import WRONG
from labkit import exercises as checks
from labkit.feedback import STUB_ADVICE
from labkit.grading import (BEGIN, END, HIDDEN_BEGIN, HIDDEN_END, NOTEBOOKS_DIR, course_problems,
                            exercises, nbgrader_role)
from labkit.student import generate_edition, nbgrader, update_student_edition

LESSONS = ("01_one_file_read", "02_streamed_turn", "03_tool_results", "04_repair_and_verify",
           "05_failure_cases")
TWO_IDEAS = {"02_streamed_turn", "05_failure_cases"}  # two exercises each
STUB = "raise NotImplementedError()"


SUBMISSIONS = ("untouched", "reference")


@dataclass
class Course:
    release: Path  # what nbgrader generate_assignment made: release/<lesson>/<lesson>.ipynb
    roots: dict  # submission -> its nbgrader course directory
    autograded: dict  # submission -> lesson -> the notebook as autograde executed it
    student: Path  # what `make student`'s code made, in a fresh folder
    added: list
    kept: list


def read(path):
    return nbformat.read(path, as_version=4)


def grade_id(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def outcome(cell) -> tuple:
    """(raised?, everything the cell printed and the error's message)."""
    error = next((o for o in cell.outputs if o.output_type == "error"), None)
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    return error is not None, text + (f"\n{error.ename}: {error.evalue}" if error else "")


def with_probes(reference):
    """The reference notebook with probe cells appended at its end: for each exercise, each
    wrong answer followed by the test cell, then the reference answer and the test cell again.

    They run after every original cell, so the graded cells run exactly as in the reference;
    nbgrader grades only those (the probes carry no nbgrader metadata).
    """
    source = {grade_id(cell): cell.source for cell in reference.cells if grade_id(cell)}
    probes = []
    for exercise in exercises(reference):
        test = source[exercise.test_id]
        for number, wrong in enumerate(WRONG[exercise.check]):
            probes += [new_code_cell(wrong.code(exercise.answer_name)),
                       new_code_cell(test, metadata={"probe": ["wrong", exercise.test_id, number]})]
        probes += [new_code_cell(source[exercise.answer_id]),
                   new_code_cell(test, metadata={"probe": ["restored", exercise.test_id]})]
    notebook = copy.deepcopy(reference)
    notebook.cells += probes
    return notebook


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """nbgrader generates once; the untouched and the reference submissions are autograded in
    two copies of that course at the same time, while `make student`'s code runs here."""
    missing = [name for name in LESSONS if not (NOTEBOOKS_DIR / f"{name}.ipynb").exists()]
    assert not missing, f"notebooks/ lacks {missing}"
    base, student = tmp_path_factory.mktemp("course"), tmp_path_factory.mktemp("student")
    with ThreadPoolExecutor(2) as pool:  # the threads only wait on nbgrader's processes
        generated = pool.submit(generate_edition, base, NOTEBOOKS_DIR, gradebook=True)
        added, kept = update_student_edition(into=student, notebooks_dir=NOTEBOOKS_DIR)
        generated.result()
        roots = {who: base.parent / f"{base.name}-{who}" for who in SUBMISSIONS}
        for who, root in roots.items():
            shutil.copytree(base, root)
            for name in LESSONS:
                notebook = read(root / "release" / name / f"{name}.ipynb")
                if who == "reference":
                    notebook = with_probes(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
                (root / "submitted" / who / name).mkdir(parents=True)
                nbformat.write(notebook, root / "submitted" / who / name / f"{name}.ipynb")
        grading = [pool.submit(nbgrader, root, "autograde", "*", timeout=900)
                   for root in roots.values()]
        for graded in grading:
            graded.result()
    autograded = {who: {name: read(root / "autograded" / who / name / f"{name}.ipynb")
                        for name in LESSONS} for who, root in roots.items()}
    return Course(base / "release", roots, autograded, student, added, kept)


@pytest.fixture(scope="module")
def scores(course):
    from nbgrader.api import Gradebook

    found = {}
    for who, root in course.roots.items():
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
            for name in LESSONS:
                notebook = gradebook.find_submission_notebook(name, name, who)
                found[who, name] = {g.name: (g.score, g.max_score) for g in notebook.grades}
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


def test_the_student_edition_is_the_reference_with_answers_and_hidden_tests_taken_out(course):
    """So the autograded reference run is the student edition with the reference answers put back."""
    for name in LESSONS:
        reference = read(NOTEBOOKS_DIR / f"{name}.ipynb").cells
        student = read(course.release / name / f"{name}.ipynb").cells
        assert len(student) == len(reference), name
        for mine, theirs in zip(student, reference):
            role = nbgrader_role(theirs)
            if role == "answer":
                before, rest = theirs.source.split(BEGIN)
                solution, after = rest.split(END)
                assert mine.source.startswith(before) and mine.source.endswith(after)
                assert STUB in mine.source and solution.strip() not in mine.source
            elif role == "test":
                assert mine.source.splitlines() == visible_lines(theirs.source), name
            else:
                assert mine.source == theirs.source, name


def visible_lines(source):
    """The lines of a test cell outside its hidden tests."""
    lines, hidden = [], False
    for line in source.splitlines():
        if line.strip() in (HIDDEN_BEGIN, HIDDEN_END):
            hidden = line.strip() == HIDDEN_BEGIN
        elif not hidden:
            lines.append(line)
    return lines


def test_every_test_cell_fails_on_the_unanswered_stub_with_readable_feedback(course):
    for name, notebook in course.autograded["untouched"].items():
        tests = [cell for cell in notebook.cells if nbgrader_role(cell) == "test"]
        assert len(tests) == (2 if name in TWO_IDEAS else 1), name
        for cell in tests:
            raised, text = outcome(cell)
            assert raised and "Not yet." in text, (name, cell.source, text)
            assert f"NotImplementedError: {STUB_ADVICE}" in text or "no value yet" in text, text


def test_the_untouched_student_edition_runs_with_errors_only_in_exercise_cells(course):
    for name, notebook in course.autograded["untouched"].items():
        for index, cell in enumerate(notebook.cells):
            raised, text = outcome(cell) if cell.cell_type == "code" else (False, "")
            if raised and nbgrader_role(cell) != "test":
                assert nbgrader_role(cell) == "answer" and "NotImplementedError" in text, \
                    (name, index, text)


def probes(course, kind):
    return [(name, cell.metadata["probe"], cell)
            for name, notebook in course.autograded["reference"].items()
            for cell in notebook.cells if cell.metadata.get("probe", [None])[0] == kind]


def test_every_test_cell_fails_on_each_wrong_answer_and_names_the_mistake(course):
    tried = set()
    for name, (_, test_id, number), cell in probes(course, "wrong"):
        exercise = next(e for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb"))
                        if e.test_id == test_id)
        mistake = WRONG[exercise.check][number]
        raised, text = outcome(cell)
        assert raised, (name, test_id, mistake.mistake, text)
        assert mistake.names in text, (name, test_id, mistake.mistake, text)
        tried.add(test_id)
    every_test = {e.test_id for name in LESSONS for e in exercises(read(NOTEBOOKS_DIR / f"{name}.ipynb"))}
    assert tried == every_test


def test_every_test_cell_passes_again_with_the_reference_answer_restored(course):
    restored = probes(course, "restored")
    assert len(restored) == len(LESSONS) + len(TWO_IDEAS)
    for name, (_, test_id), cell in restored:
        raised, text = outcome(cell)
        assert not raised and "All " in text, (name, test_id, text)


def test_make_student_makes_the_same_edition_nbgrader_autograded(course):
    assert course.added == [f"{name}.ipynb" for name in LESSONS] and course.kept == []
    for name in LESSONS:
        made = read(course.student / f"{name}.ipynb")
        graded = read(course.release / name / f"{name}.ipynb")
        assert [(c.source, c.metadata) for c in made.cells] == \
            [(c.source, c.metadata) for c in graded.cells]
