"""The nbgrader rules for exercise cells, a student edition that never overwrites a learner, and
hidden test cases that only the instructor's package holds."""

import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from labkit.grading import edition as student_module
from labkit.grading.__main__ import main
from labkit.grading.checks import CHECKS
from labkit.grading.checks.common import HiddenCasesMissing
from labkit.grading.conventions import course_problems, exercise_problems, exercises, lay_out_course
from labkit.grading.edition import copy_files_absent, update_student_edition


def answer_cell(grade_id="ex_answer", source=None, **changes):
    meta = {
        "solution": True,
        "grade": False,
        "locked": False,
        "grade_id": grade_id,
        "schema_version": 3,
        **changes,
    }
    source = source or (
        "def make_tool_message(name, result):\n    ### BEGIN SOLUTION\n"
        "    return {}\n    ### END SOLUTION"
    )
    return new_code_cell(source, metadata={"nbgrader": meta})


def graded_cell(grade_id="ex_test", source="check_tool_message(make_tool_message)", **changes):
    meta = {
        "solution": False,
        "grade": True,
        "locked": True,
        "points": 1,
        "grade_id": grade_id,
        "schema_version": 3,
        **changes,
    }
    return new_code_cell(source, metadata={"nbgrader": meta})


def notebook(*cells):
    return new_notebook(cells=[new_markdown_cell("# A lesson"), *cells])


def test_a_well_formed_exercise_has_no_problems_and_is_found():
    nb = notebook(answer_cell(), new_markdown_cell("Now check it:"), graded_cell(points=2))
    assert exercise_problems(nb) == []
    [exercise] = exercises(nb)
    assert (exercise.answer_id, exercise.test_id, exercise.points) == ("ex_answer", "ex_test", 2)
    assert (exercise.check, exercise.answer_name) == ("check_tool_message", "make_tool_message")


@pytest.mark.parametrize(
    "cells, complaint",
    [
        ([answer_cell(), graded_cell(points=0)], "points must be a number above 0"),
        ([answer_cell(), graded_cell(points=True)], "points must be a number above 0"),
        ([answer_cell(), graded_cell(locked=False)], "a test cell must be locked"),
        ([answer_cell(locked=True), graded_cell()], "an answer cell must not be locked"),
        ([answer_cell(source="def f():\n    return 1"), graded_cell()], "### BEGIN SOLUTION"),
        (
            [answer_cell(source="### END SOLUTION\n### BEGIN SOLUTION"), graded_cell()],
            "### BEGIN SOLUTION",
        ),
        ([answer_cell(grade_id="same"), graded_cell(grade_id="same")], "already used by cell 1"),
        ([answer_cell(grade_id="has space"), graded_cell()], "letters, digits"),
        ([answer_cell(schema_version=1), graded_cell()], "schema_version is 1"),
        ([graded_cell(), answer_cell()], "right after its answer cell"),
        ([answer_cell(), new_code_cell("x = 1"), graded_cell()], "right after its answer cell"),
        ([answer_cell()], "answer cell without a test cell"),
        ([answer_cell(), graded_cell(source="assert make_tool_message")], "calls one of labkit"),
        (
            [answer_cell(), graded_cell(source="check_tool_message(f)\n### BEGIN HIDDEN TESTS")],
            "must come in pairs",
        ),
        (
            [answer_cell(), graded_cell(source="### BEGIN SOLUTION\ncheck_tool_message(f)")],
            "no solution markers",
        ),
        ([answer_cell(grade=True), graded_cell()], "neither an answer nor a test cell"),
        ([new_code_cell("x = 1")], "no graded exercise"),
    ],
)
def test_each_broken_rule_is_named(cells, complaint):
    problems = exercise_problems(notebook(*cells))
    assert any(complaint in problem for problem in problems), problems


def test_a_grade_id_shared_by_two_notebooks_is_named(tmp_path):
    for name in ("01_a", "02_b"):
        nbformat.write(notebook(answer_cell(), graded_cell()), tmp_path / f"{name}.ipynb")
    report = course_problems(sorted(tmp_path.glob("*.ipynb")))
    assert report["course"] == [
        "grade_id 'ex_answer' is used in 01_a.ipynb, 02_b.ipynb",
        "grade_id 'ex_test' is used in 01_a.ipynb, 02_b.ipynb",
    ]


def test_the_check_command_exits_1_and_prints_each_problem(tmp_path, capsys):
    path = tmp_path / "01_a.ipynb"
    nbformat.write(notebook(answer_cell(), graded_cell(points=0)), path)
    assert main(["check", str(path)]) == 1
    assert "points must be a number above 0" in capsys.readouterr().out
    nbformat.write(notebook(answer_cell(), graded_cell()), path)
    assert main(["check", str(path)]) == 0


def test_the_course_layout_puts_each_lesson_in_its_own_assignment(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("01_a", "02_b"):
        nbformat.write(notebook(answer_cell(), graded_cell()), notebooks / f"{name}.ipynb")
    assert lay_out_course(tmp_path / "course", notebooks) == ["01_a", "02_b"]
    assert (tmp_path / "course/source/02_b/02_b.ipynb").read_bytes() == (
        notebooks / "02_b.ipynb"
    ).read_bytes()
    config = (tmp_path / "course/nbgrader_config.py").read_text()
    assert "course_id" in config
    assert "c.ExecuteKillingHangs.sandbox = True" in config
    assert "c.RegradeOutsideKernel.sandbox = True" in config
    assert (tmp_path / "course").stat().st_mode & 0o777 == 0o700  # answers and gradebook inside


def test_copying_the_edition_never_overwrites_a_learners_file(tmp_path):
    edition = tmp_path / "edition"
    edition.mkdir()
    for lesson in ("01_a", "02_b"):
        (edition / f"{lesson}.ipynb").write_text(f"fresh {lesson}")
    student = tmp_path / "student"
    student.mkdir()
    (student / "01_a.ipynb").write_text("my work")
    assert update_student_edition(student, edition) == (["02_b.ipynb"], ["01_a.ipynb"])
    assert (student / "01_a.ipynb").read_text() == "my work"
    assert (student / "02_b.ipynb").read_text() == "fresh 02_b"
    paths = sorted(edition.glob("*.ipynb"))
    assert copy_files_absent(paths, student) == ([], ["01_a.ipynb", "02_b.ipynb"])


def test_without_the_instructors_package_a_hidden_test_stops_and_says_what_to_install(
    monkeypatch,
):
    """Every check asks the instructor's package for its hidden cases before it runs anything,
    so no check can carry hidden cases of its own in labkit (a learner's install), and grading
    without them stops instead of scoring every learner 0."""
    monkeypatch.setitem(sys.modules, "labkit_answers.hidden", None)  # import fails: not here
    for check in CHECKS.values():
        with pytest.raises(HiddenCasesMissing, match="instructor's package"):
            check(lambda *args: None, hidden=True)
    with pytest.raises(HiddenCasesMissing):
        from labkit.grading.checks import grade

        grade("check_tool_message", "def f(name, result):\n    return {}", "f", hidden=True)


def test_reference_answers_missing_is_said_once_with_what_to_do(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(student_module, "NOTEBOOKS_DIR", None)
    from labkit.cli import main as labkit_main

    assert labkit_main(["lessons", "--reference", str(tmp_path / "ref")]) == 1
    said = capsys.readouterr().err
    assert "not part of this install" in said and "labkit_answers" in said
    assert not (tmp_path / "ref").exists()


def test_a_failed_nbgrader_run_shows_the_cause_it_logged_first_not_only_its_last_lines(
    tmp_path, monkeypatch
):
    """nbgrader logs a notebook's traceback, then goes on grading: the cause is far above the
    end."""
    cause = "Traceback (most recent call last):\n  ...\nRuntimeError: Kernel died before replying"
    log = "[AutogradeApp | INFO] start\n" + cause + "\n" + "[AutogradeApp | INFO] more\n" * 400
    monkeypatch.setattr(
        student_module.subprocess,
        "run",
        lambda *args, **kwargs: subprocess.CompletedProcess(args, 1, stdout=log, stderr="exit now"),
    )
    with pytest.raises(student_module.EditionError) as failed:
        student_module.nbgrader(tmp_path, "autograde", "*")
    message = str(failed.value)
    assert cause in message and message.endswith("more\nexit now")
