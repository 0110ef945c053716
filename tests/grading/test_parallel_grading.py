"""Parallel grading on a real Dask cluster leaves the gradebook and ``autograded/`` exactly as a
serial ``nbgrader autograde`` does; it resumes after an interruption without grading anything
twice; what cannot be graded is named and scores 0; the class report counts what was planted.

A small generated class hands in lesson 01: right answers in two styles, the untouched
stub, a wrong answer (twice), an answer fitted to the visible cases that fails a hidden one,
an answer that hangs ignoring SIGINT, one that kills its kernel, two grader cheats; and three
submissions that cannot be graded (a corrupt notebook, none at all, a notebook that runs past
its whole budget). One copy of the course is graded by ``nbgrader autograde``, one by
``labkit.grading.grade_class`` through a ``dask scheduler`` and two ``dask worker`` processes
started here, stopped after three learner-lessons and then run again.
"""

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from answers import DIES, HANG, RIGHT, WRONG
from classes import (
    gradebook_dump,
    graded_cells_only,
    grading_sandbox_or_skip,
    hand_in,
    notebook_view,
    read,
)
from dask_cluster import dask_cluster
from grader_cheats import CHEATS as GRADER_CHEATS
from grader_cheats import WRONG_ANSWER
from nbformat.v4 import new_code_cell

from labkit.grading.conventions import exercises, lay_out_course
from labkit.grading.edition import generate_edition, nbgrader
from labkit.grading.grade_class import grade_course
from labkit.grading.gradebook_writer import read_journal
from labkit.grading.report import class_results, write_report
from labkit.settings import NOTEBOOKS_DIR

LESSON = "01_one_file_read"
EMPTIES = next(w.source for w in WRONG["check_tool_message"] if w.mistake.startswith("empties"))
VISIBLE_ONLY = """
import json
def make_tool_message(name, result):
    if result == {}:  # fitted to the visible cases: no visible case has an empty result
        return {"role": "tool", "tool_name": name, "content": ""}
    return {"role": "tool", "tool_name": name, "content": json.dumps(result, ensure_ascii=False)}
"""
CHEAT_CELLS = {cheat.learner: cheat for cheat in GRADER_CHEATS if cheat.learner in
               ("x_trigger", "x_vandal")}  # fmt: skip
#: learner -> the answer cell it hands in (None: the untouched stub; "reference": the lesson's).
ANSWERS = {
    "right_own": RIGHT["check_tool_message"].replace("$name", "make_tool_message"),
    "right_reference": "reference",
    "stub_a": None,
    "stub_b": None,
    "empties_a": EMPTIES.replace("$name", "make_tool_message"),
    "empties_b": EMPTIES.replace("$name", "make_tool_message"),
    "visible_only": VISIBLE_ONLY,
    "hangs": HANG,
    "dies": DIES,
    **{learner: WRONG_ANSWER for learner in CHEAT_CELLS},
}
#: Submissions nbgrader cannot grade as they are: each is named, scores 0, and is left out of
#: the comparison (serial nbgrader skips or half-records them, as its docs say).
UNGRADABLE = {
    "corrupt": "corrupt notebook",
    "missing": "no notebook handed in",
    "too_slow": "hangs",
}
#: What the class report must count, written out from what was planted above: per mistake,
#: the learners who made it (the name is the first case the feedback says was missed).
PLANTED = {
    "not answered yet": 2,  # stub_a, stub_b
    "a replace_text result": 4,  # empties_a, empties_b (they change the result), the 2 cheats
    "an empty result": 1,  # visible_only: the hidden case
    "did not finish in time": 1,  # hangs
    "its process stopped (a crash, an exit)": 1,  # dies
    "not graded: corrupt notebook": 1,
    "not graded: no notebook handed in": 1,
    "not graded: hangs": 1,
}
TIMEOUTS = dict(cell_timeout=8, answer_timeout=6, interrupt_grace=2, notebook_timeout=4)


def submission_of(release, learner, course):
    notebook = graded_cells_only(read(release / LESSON / f"{LESSON}.ipynb"))
    [exercise] = exercises(notebook)
    answer = ANSWERS.get(learner)
    if answer == "reference":
        reference = read(NOTEBOOKS_DIR / f"{LESSON}.ipynb")
        answer = reference.cells[exercises(reference)[0].answer_index].source
    if answer is not None:
        notebook.cells[exercise.answer_index].source = answer
    if learner in CHEAT_CELLS:
        cell = CHEAT_CELLS[learner].cell.replace("$me", learner).replace("$course", str(course))
        cell = cell.replace("$gradebook", str(course / "gradebook.db"))
        notebook.cells.insert(exercise.answer_index, new_code_cell(cell))
    if learner == "too_slow":  # three cells, each past the cell timeout: past the whole budget
        slow = "import time\ntime.sleep(30)"
        notebook.cells[:0] = [new_code_cell(slow) for _ in range(3)]
    return notebook


@dataclass
class Graded:
    serial: Path
    parallel: Path
    first: object  # the run stopped after 3
    second: object  # the run that finished
    third: object  # a run with nothing left


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A ``dask scheduler`` and two ``dask worker`` processes on loopback (tests/dask_cluster.py);
    a worker's death ends its job at once (no retry on the other worker)."""
    with dask_cluster(tmp_path_factory.mktemp("dask"), workers=2) as address:
        yield address


@pytest.fixture(scope="module")
def graded(tmp_path_factory, cluster):
    grading_sandbox_or_skip()
    base = tmp_path_factory.mktemp("small-class")
    serial, parallel = base / "serial", base / "parallel"
    lessons = base / "lessons"  # lesson 01 alone: nbgrader generates no other
    lessons.mkdir()
    shutil.copy(NOTEBOOKS_DIR / f"{LESSON}.ipynb", lessons)
    lay_out_course(serial, lessons, **TIMEOUTS)
    generate_edition(serial, lessons, gradebook=True)
    release = serial / "release"
    for learner in ANSWERS:
        hand_in(serial, learner, LESSON, submission_of(release, learner, serial))
    shutil.copytree(serial, parallel, symlinks=True)
    nbgrader(serial, "autograde", LESSON, timeout=600)  # the learners that can be graded
    (parallel / "submitted" / "missing" / LESSON).mkdir(parents=True)
    corrupt = parallel / "submitted" / "corrupt" / LESSON / f"{LESSON}.ipynb"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text('{"cells": [{"cell_type": "code", "source": "')
    hand_in(parallel, "too_slow", LESSON, submission_of(release, "too_slow", parallel))
    first = grade_course(parallel, scheduler=cluster, limit=3)
    second = grade_course(parallel, scheduler=cluster)
    third = grade_course(parallel, scheduler=cluster)
    return Graded(serial, parallel, first, second, third)


def test_the_parallel_gradebook_is_the_serial_one(graded):
    serial, parallel = gradebook_dump(graded.serial), gradebook_dump(graded.parallel)
    compared = {key: value for key, value in parallel.items() if key[0] not in UNGRADABLE}
    assert set(serial) == {(learner, LESSON) for learner in ANSWERS}
    assert compared == serial
    scores = {learner: serial[learner, LESSON]["score"] for learner in ANSWERS}
    assert scores == {learner: (1.0 if learner.startswith("right") else 0.0) for learner in ANSWERS}


def test_the_autograded_notebooks_are_the_serial_ones(graded):
    for learner in ANSWERS:
        path = Path("autograded") / learner / LESSON / f"{LESSON}.ipynb"
        assert notebook_view(graded.parallel / path) == notebook_view(graded.serial / path), learner
        files = sorted(p.name for p in (graded.serial / path).parent.iterdir())
        assert sorted(p.name for p in (graded.parallel / path).parent.iterdir()) == files


def test_an_interrupted_run_resumes_and_never_grades_a_learner_lesson_twice(graded):
    first, second, third = graded.first, graded.second, graded.third
    assert first.interrupted and len(first.graded) + len(first.failed) == 3
    done_first = set(first.graded) | set(first.failed)
    done_second = set(second.graded) | set(second.failed)
    assert not done_first & done_second and not second.interrupted
    everyone = {f"{learner}/{LESSON}" for learner in [*ANSWERS, *UNGRADABLE]}
    assert done_first | done_second == everyone
    assert third.graded == [] and third.failed == {} and sorted(third.skipped) == sorted(everyone)
    lines = (graded.parallel / "grading_journal.jsonl").read_text().splitlines()
    assert len(lines) == len(everyone)  # one line per learner-lesson, ever
    assert all(entry["isolated"] for entry in read_journal(graded.parallel).values())


def test_what_cannot_be_graded_is_named_and_scores_zero_for_that_lesson_alone(graded):
    failed = {**graded.first.failed, **graded.second.failed}
    assert set(failed) == {f"{learner}/{LESSON}" for learner in UNGRADABLE}
    for learner, reason in UNGRADABLE.items():
        assert failed[f"{learner}/{LESSON}"].startswith(reason), failed
    dump = gradebook_dump(graded.parallel)
    for learner in UNGRADABLE:
        assert dump[learner, LESSON]["score"] == 0
        assert all(score == 0 for score, _ in dump[learner, LESSON]["grades"].values())


def test_the_class_report_counts_the_planted_mistakes(graded, tmp_path):
    results = class_results(graded.parallel)
    [exercise] = [e for e in results.exercises if e.lesson == LESSON]
    assert exercise.learners == len(ANSWERS) + len(UNGRADABLE)
    assert exercise.passed == 2
    assert dict(exercise.mistakes) == PLANTED
    assert [who.name for who in results.learners][-2:] == ["right_own", "right_reference"]
    paths = write_report(results, tmp_path)
    page = paths["html"].read_text()
    assert "data:image/png;base64," in page and "2 of 14 (14%)" in page
    assert "did not finish in time: 1 of 14" in page and "UNISOLATED" not in page
    rows = paths["csv"].read_text().splitlines()
    assert f"{LESSON},check_make_tool_message,14,2,0.14,a replace_text result,4" in rows
